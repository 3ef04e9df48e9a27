import { describe, expect, it } from 'vitest';
import {
  asBorrower,
  borrowSpec,
  HEADROOM_MIN_SLOTS,
  HEADROOM_SHARE,
  modelGate,
  RELEASES_NEAR,
} from '../../../../lib/dispatch/flow/gate-spec.js';
import { mayTakeSlot } from '../../../../lib/limits/capacity-gate.js';
import { parsePolicy } from '../../../../lib/policy/schema.js';
import { basePolicy } from '../../policy/fixtures.js';

// 8 slots: realtime reserves 4 (maximum wait 10 s: calls over 1 s are long for it), batch 2, offline 1.
const gate = modelGate(parsePolicy(basePolicy()), 'm', 8);
/** Only realtime is active, its recent demand `need` slots beyond what it holds. */
const realtimeActive =
  (need = 0) =>
  (tier: string) =>
    tier === 'realtime' ? need : undefined;
const fill = (spec: ReturnType<typeof borrowSpec>, inUse: Record<string, number>, endsInMs: number[] = []) => {
  const used = { ...inUse };
  while (mayTakeSlot(spec, used, 'batch', undefined, endsInMs)) used.batch = (used.batch ?? 0) + 1;
  return used;
};

describe('borrowSpec: lend everything, but never trap an active lender behind long calls', () => {
  it('lends every idle slot while the speed is unknown, to short calls, and while the lenders are quiet', () => {
    expect(
      fill(
        borrowSpec(gate, 'batch', undefined, () => 0),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 500, () => 0),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 5_000, () => undefined),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
  });

  it('keeps one idle slot of each active lender from a long call', () => {
    const active = realtimeActive();
    expect(fill(borrowSpec(gate, 'batch', 5_000, active), { realtime: 1 })).toEqual({
      realtime: 1,
      batch: 6,
    });
    // Offline may wait an hour: a 5 s call is short for it, its idle slot is lent. A 10 min one is not.
    expect(
      fill(
        borrowSpec(gate, 'batch', 5_000, () => 0),
        {},
      ),
    ).toEqual({ batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 600_000, () => 0),
        {},
      ),
    ).toEqual({ batch: 6 });
  });
});

describe("borrowSpec: a call longer than the lender's maximum wait is kept from its recent demand too", () => {
  // realtime reserves 4 and holds 1 (3 idle); lately it wanted 1 more. Its maximum wait is 10 s.
  const busy = realtimeActive(1);
  it('keeps the need and the headroom from a call it cannot outwait, never lent while releases are near', () => {
    // Kept: the need and the headroom, 2 of the 3 idle; batch has its 2, the unreserved, offline's and 1 lent.
    const spec = borrowSpec(gate, 'batch', 10_001, busy);
    expect(fill(spec, { realtime: 1 })).toEqual({ realtime: 1, batch: 5 });
    expect(fill(spec, { realtime: 1 }, Array<number>(6).fill(100))).toEqual({ realtime: 1, batch: 5 });
    // Never past the lender's idle reservation: a need larger than it keeps all of it, no more.
    expect(fill(borrowSpec(gate, 'batch', 10_001, realtimeActive(9)), { realtime: 1 })).toEqual({
      realtime: 1,
      batch: 4,
    });
  });

  it('keeps only the headroom from a call it can outwait, and nothing from a short one or while quiet', () => {
    expect(fill(borrowSpec(gate, 'batch', 10_000, busy), { realtime: 1 })).toEqual({ realtime: 1, batch: 6 });
    expect(fill(borrowSpec(gate, 'batch', 500, busy), { realtime: 1 })).toEqual({ realtime: 1, batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 600_000, () => undefined),
        { realtime: 1 },
      ),
    ).toEqual({
      realtime: 1,
      batch: 7,
    });
  });

  it('a need within the headroom keeps the headroom, lent while releases are near as before', () => {
    const spec = borrowSpec(gate, 'batch', 10_001, realtimeActive(0));
    expect(fill(spec, { realtime: 1 })).toEqual({ realtime: 1, batch: 6 });
    expect(fill(spec, { realtime: 1 }, Array<number>(RELEASES_NEAR).fill(100))).toEqual({ realtime: 1, batch: 7 });
  });
});

describe('borrowSpec: the headroom is lent too while releases are near anyway', () => {
  const active = realtimeActive();
  const spec = borrowSpec(gate, 'batch', 5_000, active);
  it("lends the last idle slot when RELEASES_NEAR calls in flight end within the lender's short-call time, not when they do not", () => {
    // realtime: maximum wait 10 s, so 1 s is its short-call time. The gate sees every dispatcher's calls.
    const near = (ms: number) => [...Array<number>(RELEASES_NEAR - 1).fill(200), ms, 4_000];
    expect(fill(spec, { realtime: 1 }, near(900))).toEqual({ realtime: 1, batch: 7 });
    expect(fill(spec, { realtime: 1 }, near(1_000))).toEqual({ realtime: 1, batch: 7 });
    // An overdue call (its estimate came out short) is near too.
    expect(fill(spec, { realtime: 1 }, near(-300))).toEqual({ realtime: 1, batch: 7 });
    expect(fill(spec, { realtime: 1 }, near(1_001))).toEqual({ realtime: 1, batch: 6 });
    expect(fill(spec, { realtime: 1 }, near(Infinity))).toEqual({ realtime: 1, batch: 6 });
    expect(fill(spec, { realtime: 1 })).toEqual({ realtime: 1, batch: 6 });
  });
});

describe('borrowSpec: on a pool of 1 / HEADROOM_SHARE slots or more, the headroom is that share and never lent', () => {
  // 64 slots: realtime reserves 38 (60 %), and keeps 5 % of the pool, 3 slots, from long calls.
  const large = modelGate(parsePolicy(basePolicy()), 'm', 64);
  const spec = borrowSpec(large, 'batch', 5_000, realtimeActive());
  const kept = Math.floor(64 * HEADROOM_SHARE);
  it('keeps its share idle from long calls however many calls in flight end soon, and lends it to short ones', () => {
    const soon = Array<number>(60).fill(100);
    expect(fill(spec, { realtime: 10 }, soon)).toEqual({ realtime: 10, batch: 54 - kept });
    expect(fill(spec, { realtime: 10 })).toEqual({ realtime: 10, batch: 54 - kept });
    expect(
      fill(
        borrowSpec(large, 'batch', 500, () => 0),
        { realtime: 10 },
      ),
    ).toEqual({ realtime: 10, batch: 54 });
  });

  it('starts at 1 / HEADROOM_SHARE slots; below, one slot is kept and lent while releases are near', () => {
    const at = Math.ceil(1 / HEADROOM_SHARE);
    expect(modelGate(parsePolicy(basePolicy()), 'm', at).headroom).toEqual({
      keep: 1,
      lentWhileNear: false,
      fromOutwaitable: true,
    });
    expect(modelGate(parsePolicy(basePolicy()), 'm', at - 1).headroom).toEqual({
      keep: 1,
      lentWhileNear: true,
      fromOutwaitable: true,
    });
  });
});

describe('borrowSpec: under HEADROOM_MIN_SLOTS slots the headroom is kept only from calls the lender cannot outwait', () => {
  // 4 slots: realtime reserves 2 (maximum wait 10 s), batch 1, offline none, one unreserved.
  const small = modelGate(parsePolicy(basePolicy()), 'm', HEADROOM_MIN_SLOTS - 4);
  it('lends every idle slot to a call within the maximum wait, and keeps the headroom from a longer one', () => {
    expect(small.headroom.fromOutwaitable).toBe(false);
    expect(fill(borrowSpec(small, 'batch', 5_000, realtimeActive()), { realtime: 1 })).toEqual({
      realtime: 1,
      batch: 3,
    });
    expect(fill(borrowSpec(small, 'batch', 10_001, realtimeActive()), { realtime: 1 })).toEqual({
      realtime: 1,
      batch: 2,
    });
    expect(modelGate(parsePolicy(basePolicy()), 'm', HEADROOM_MIN_SLOTS).headroom.fromOutwaitable).toBe(true);
  });
});

describe('asBorrower: a yielding tier takes nothing on the strength of its own reservation', () => {
  it('takes its idle reserved slot as a borrower only where the others may lend', () => {
    // batch holds its 2 and the unreserved one; realtime (reserves 4) is active and 6 s calls are long for it.
    const used = { realtime: 1, batch: 3 };
    const headroom = borrowSpec(gate, 'offline', 6_000, realtimeActive());
    expect(mayTakeSlot(headroom, used, 'offline')).toBe(true);
    // batch has borrowed all realtime lends (2 of its 3 idle slots, one kept back) and offline's idle one: the
    // free slot is realtime's headroom, and offline, yielding, may not take it on the strength of its reservation.
    const fuller = { realtime: 1, batch: 6 };
    expect(mayTakeSlot(borrowSpec(gate, 'batch', 6_000, realtimeActive()), fuller, 'batch')).toBe(false);
    expect(mayTakeSlot(borrowSpec(gate, 'offline', 6_000, realtimeActive()), fuller, 'offline')).toBe(true);
    expect(
      mayTakeSlot(asBorrower(borrowSpec(gate, 'offline', 6_000, realtimeActive()), 'offline'), fuller, 'offline'),
    ).toBe(false);
    expect(mayTakeSlot(asBorrower(headroom, 'offline'), used, 'offline')).toBe(true);
  });
});

describe('modelGate', () => {
  it('names for each tier the tiers of greater weight, which it yields to while its work has slack', () => {
    expect(Object.fromEntries(gate.heavier)).toEqual({
      realtime: [],
      batch: ['realtime'],
      offline: ['realtime', 'batch'],
    });
  });
});
