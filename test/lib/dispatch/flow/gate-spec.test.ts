import { describe, expect, it } from 'vitest';
import {
  asBorrower,
  borrowSpec,
  HEADROOM_SHARE,
  modelGate,
  RELEASES_NEAR,
} from '../../../../lib/dispatch/flow/gate-spec.js';
import { mayTakeSlot } from '../../../../lib/limits/capacity-gate.js';
import { parsePolicy } from '../../../../lib/policy/schema.js';
import { basePolicy } from '../../policy/fixtures.js';

// 8 slots: realtime reserves 4 (maximum wait 10 s: calls over 1 s are long for it), batch 2, offline 1.
const gate = modelGate(parsePolicy(basePolicy()), 'm', 8);
const fill = (spec: ReturnType<typeof borrowSpec>, inUse: Record<string, number>, endsInMs: number[] = []) => {
  const used = { ...inUse };
  while (mayTakeSlot(spec, used, 'batch', undefined, endsInMs)) used.batch = (used.batch ?? 0) + 1;
  return used;
};

describe('borrowSpec: lend everything, but never trap an active lender behind long calls', () => {
  it('lends every idle slot while the speed is unknown, to short calls, and while the lenders are quiet', () => {
    expect(
      fill(
        borrowSpec(gate, 'batch', undefined, () => true),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 500, () => true),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 5_000, () => false),
        { realtime: 1 },
      ),
    ).toEqual({ realtime: 1, batch: 7 });
  });

  it('keeps one idle slot of each active lender from a long call', () => {
    const active = (tier: string) => tier === 'realtime';
    expect(fill(borrowSpec(gate, 'batch', 5_000, active), { realtime: 1 })).toEqual({
      realtime: 1,
      batch: 6,
    });
    // Offline may wait an hour: a 5 s call is short for it, its idle slot is lent. A 10 min one is not.
    expect(
      fill(
        borrowSpec(gate, 'batch', 5_000, () => true),
        {},
      ),
    ).toEqual({ batch: 7 });
    expect(
      fill(
        borrowSpec(gate, 'batch', 600_000, () => true),
        {},
      ),
    ).toEqual({ batch: 6 });
  });
});

describe('borrowSpec: the headroom is lent too while releases are near anyway', () => {
  const active = (tier: string) => tier === 'realtime';
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
  const spec = borrowSpec(large, 'batch', 5_000, (tier) => tier === 'realtime');
  const kept = Math.floor(64 * HEADROOM_SHARE);
  it('keeps its share idle from long calls however many calls in flight end soon, and lends it to short ones', () => {
    const soon = Array<number>(60).fill(100);
    expect(fill(spec, { realtime: 10 }, soon)).toEqual({ realtime: 10, batch: 54 - kept });
    expect(fill(spec, { realtime: 10 })).toEqual({ realtime: 10, batch: 54 - kept });
    expect(
      fill(
        borrowSpec(large, 'batch', 500, () => true),
        { realtime: 10 },
      ),
    ).toEqual({ realtime: 10, batch: 54 });
  });

  it('starts at 1 / HEADROOM_SHARE slots; below, one slot is kept and lent while releases are near', () => {
    const at = Math.ceil(1 / HEADROOM_SHARE);
    expect(modelGate(parsePolicy(basePolicy()), 'm', at).headroom).toEqual({ keep: 1, lentWhileNear: false });
    expect(modelGate(parsePolicy(basePolicy()), 'm', at - 1).headroom).toEqual({ keep: 1, lentWhileNear: true });
  });
});

describe('asBorrower: a yielding tier takes nothing on the strength of its own reservation', () => {
  it('takes its idle reserved slot as a borrower only where the others may lend', () => {
    // batch holds its 2 and the unreserved one; realtime (reserves 4) is active and 6 s calls are long for it.
    const used = { realtime: 1, batch: 3 };
    const headroom = borrowSpec(gate, 'offline', 6_000, (t) => t === 'realtime');
    expect(mayTakeSlot(headroom, used, 'offline')).toBe(true);
    // batch has borrowed all realtime lends (2 of its 3 idle slots, one kept back) and offline's idle one: the
    // free slot is realtime's headroom, and offline, yielding, may not take it on the strength of its reservation.
    const fuller = { realtime: 1, batch: 6 };
    expect(
      mayTakeSlot(
        borrowSpec(gate, 'batch', 6_000, (t) => t === 'realtime'),
        fuller,
        'batch',
      ),
    ).toBe(false);
    expect(
      mayTakeSlot(
        borrowSpec(gate, 'offline', 6_000, (t) => t === 'realtime'),
        fuller,
        'offline',
      ),
    ).toBe(true);
    expect(
      mayTakeSlot(
        asBorrower(
          borrowSpec(gate, 'offline', 6_000, (t) => t === 'realtime'),
          'offline',
        ),
        fuller,
        'offline',
      ),
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
