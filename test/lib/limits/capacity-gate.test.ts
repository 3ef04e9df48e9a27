import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gateFromShares, mayTakeSlot, takeSlot } from '../../../lib/limits/capacity-gate.js';

// The second seed's shares: 60/25/15, each tier lending half of its idle reservation.
const spec = gateFromShares(20, {
  realtime: { share: 0.6, lendable: 0.5 },
  batch: { share: 0.25, lendable: 0.5 },
  offline: { share: 0.15, lendable: 0.5 },
});

describe('capacity gate', () => {
  it('splits capacity by share, leftovers unreserved', () => {
    expect(spec.tiers).toEqual({
      realtime: { reserved: 12, lendable: 6 },
      batch: { reserved: 5, lendable: 2 },
      offline: { reserved: 3, lendable: 1 },
    });
  });

  it('a tier always gets its reservation while the model has room', () => {
    expect(mayTakeSlot(spec, { batch: 4, offline: 3 }, 'realtime')).toBe(true);
    expect(mayTakeSlot(spec, { realtime: 11 }, 'realtime')).toBe(true);
  });

  it('borrows only what idle tiers lend', () => {
    // batch holds its 5; realtime and offline idle lend 6 + 1.
    let inUse = { batch: 5 };
    let extra = 0;
    while (mayTakeSlot(spec, inUse, 'batch')) ((inUse = { batch: inUse.batch + 1 }), extra++);
    expect(extra).toBe(7);
  });

  it('stops lending as soon as the lender needs its slots', () => {
    // batch borrowed 6 from realtime; realtime now busy with 8: its idle 4 lends min(4, 6) = 4 < 6 borrowed.
    expect(mayTakeSlot(spec, { batch: 11, realtime: 8 }, 'batch')).toBe(false);
    expect(mayTakeSlot(spec, { batch: 11, realtime: 8 }, 'realtime')).toBe(true);
  });

  it("lends nothing of a reclaiming tier's idle reservation, but the others' and the unreserved remainder stay borrowable", () => {
    const reclaiming = new Set(['realtime']);
    let inUse = { batch: 5 };
    let extra = 0;
    while (mayTakeSlot(spec, inUse, 'batch', reclaiming)) ((inUse = { batch: inUse.batch + 1 }), extra++);
    // Only offline's 1; realtime's 6 are kept for realtime.
    expect(extra).toBe(1);
    const withSpare = {
      capacity: 10,
      tiers: { realtime: { reserved: 6, lendable: 3 }, batch: { reserved: 3, lendable: 1 } },
    };
    expect(mayTakeSlot(withSpare, { batch: 3 }, 'batch', reclaiming)).toBe(true);
    expect(mayTakeSlot(withSpare, { batch: 4 }, 'batch', reclaiming)).toBe(false);
  });

  it('a reclaiming tier still takes its reservation and borrows from others as before', () => {
    const reclaiming = new Set(['realtime']);
    expect(mayTakeSlot(spec, { batch: 5, offline: 3 }, 'realtime', reclaiming)).toBe(true);
    let inUse = { realtime: 12 };
    let extra = 0;
    while (mayTakeSlot(spec, inUse, 'realtime', reclaiming)) ((inUse = { realtime: inUse.realtime + 1 }), extra++);
    expect(extra).toBe(3);
  });

  describe('takeSlot marks', () => {
    const small = {
      capacity: 4,
      tiers: { realtime: { reserved: 2, lendable: 2 }, batch: { reserved: 2, lendable: 0 } },
    };

    it('a refusal below the reservation marks the tier until now + reclaimMs, and then keeps its idle part from borrowers', () => {
      const refused = takeSlot(small, { batch: 4 }, 'realtime', {}, 1_000, 2_000);
      expect(refused).toEqual({ granted: false, marks: { realtime: 3_000 }, claims: {} });
      // One borrowed slot freed: batch would borrow it back without the mark.
      expect(takeSlot(small, { batch: 3 }, 'batch', {}, 1_500, 2_000).granted).toBe(true);
      expect(takeSlot(small, { batch: 3 }, 'batch', refused.marks, 1_500, 2_000)).toEqual({
        granted: false,
        marks: { realtime: 3_000 },
        claims: {},
      });
    });

    it('a refusal at or above the reservation marks nothing', () => {
      expect(takeSlot(small, { batch: 4 }, 'batch', {}, 0, 2_000)).toEqual({ granted: false, marks: {}, claims: {} });
      expect(takeSlot(small, { batch: 2, realtime: 2 }, 'realtime', {}, 0, 2_000)).toEqual({
        granted: false,
        marks: {},
        claims: {},
      });
      // A tier outside the spec reserves nothing.
      expect(takeSlot(small, { batch: 4 }, 'other', {}, 0, 2_000)).toEqual({ granted: false, marks: {}, claims: {} });
    });

    it('a grant below the reservation keeps the mark; the grant that reaches it clears it', () => {
      const marks = { realtime: 3_000 };
      expect(takeSlot(small, { batch: 2 }, 'realtime', marks, 1_000, 2_000)).toEqual({
        granted: true,
        marks,
        claims: {},
      });
      expect(takeSlot(small, { batch: 2, realtime: 1 }, 'realtime', marks, 1_000, 2_000)).toEqual({
        granted: true,
        marks: {},
        claims: {},
      });
    });

    it('a mark lapses at its time, and a later refusal extends it but never shortens it', () => {
      expect(takeSlot(small, { batch: 3 }, 'batch', { realtime: 3_000 }, 2_999, 2_000).granted).toBe(false);
      expect(takeSlot(small, { batch: 3 }, 'batch', { realtime: 3_000 }, 3_000, 2_000)).toEqual({
        granted: true,
        marks: {},
        claims: {},
      });
      expect(takeSlot(small, { batch: 4 }, 'realtime', { realtime: 3_000 }, 2_000, 2_000).marks).toEqual({
        realtime: 4_000,
      });
      expect(takeSlot(small, { batch: 4 }, 'realtime', { realtime: 3_000 }, 2_000, 500).marks).toEqual({
        realtime: 3_000,
      });
    });
  });

  describe('takeSlot claims', () => {
    const spec = { capacity: 3, tiers: { realtime: { reserved: 3, lendable: 0 } } };
    const d1 = { asker: 'd1', deadline: 5_000 };

    it('a refused ask claims its tier; a later deadline elsewhere yields the last slot the claimant could take, an earlier one does not', () => {
      const refused = takeSlot(spec, { realtime: 3 }, 'realtime', {}, 1_000, 1_000, { ask: d1 });
      expect(refused.claims).toEqual({ realtime: { ...d1, until: 2_000 } });
      const later = takeSlot(spec, { realtime: 2 }, 'realtime', {}, 1_100, 1_000, {
        ask: { asker: 'd0', deadline: 6_000 },
        claims: refused.claims,
      });
      // Refused below its reservation, the tier is marked reclaiming too: nobody borrows the slot the claimant awaits.
      expect(later).toEqual({ granted: false, marks: { realtime: 2_100 }, claims: refused.claims });
      // Two free: the later one takes one and leaves the claimant the other.
      expect(
        takeSlot(spec, { realtime: 1 }, 'realtime', {}, 1_100, 1_000, {
          ask: { asker: 'd0', deadline: 6_000 },
          claims: refused.claims,
        }).granted,
      ).toBe(true);
      expect(
        takeSlot(spec, { realtime: 2 }, 'realtime', {}, 1_100, 1_000, {
          ask: { asker: 'd2', deadline: 4_000 },
          claims: refused.claims,
        }).granted,
      ).toBe(true);
      // The claimant's grant ends its claim.
      expect(
        takeSlot(spec, { realtime: 2 }, 'realtime', {}, 1_100, 1_000, { ask: d1, claims: refused.claims }),
      ).toEqual({
        granted: true,
        marks: {},
        claims: {},
      });
    });

    it('a claimant refused while a slot is free drops its claim: its own spec holds it back, not the race', () => {
      const strict = {
        capacity: 3,
        tiers: { realtime: { reserved: 2, lendable: 0 }, batch: { reserved: 1, lendable: 0 } },
      };
      const lending = { ...strict, tiers: { ...strict.tiers, realtime: { reserved: 2, lendable: 1 } } };
      const d0 = { asker: 'd0', deadline: 9_000 };
      const full = takeSlot(strict, { realtime: 2, batch: 1 }, 'batch', {}, 1_000, 1_000, { ask: d1 });
      expect(full.claims).toEqual({ batch: { ...d1, until: 2_000 } });
      // A realtime slot frees: d0 could borrow it, but yields to d1's claim...
      expect(
        takeSlot(lending, { realtime: 1, batch: 1 }, 'batch', {}, 1_100, 1_000, { ask: d0, claims: full.claims })
          .granted,
      ).toBe(false);
      // ... d1's own spec lends it nothing, so its refusal ends the claim...
      const refused = takeSlot(strict, { realtime: 1, batch: 1 }, 'batch', {}, 1_100, 1_000, {
        ask: d1,
        claims: full.claims,
      });
      expect(refused).toEqual({ granted: false, marks: {}, claims: {} });
      // ... and d0 takes the slot instead of leaving it idle.
      expect(
        takeSlot(lending, { realtime: 1, batch: 1 }, 'batch', {}, 1_100, 1_000, { ask: d0, claims: refused.claims })
          .granted,
      ).toBe(true);
    });

    it("a room full but for a lender's keep is a race too: the refused asker claims, and its grant ends the claim", () => {
      // 4 slots: realtime reserves 3 and keeps 1 idle from long calls (never lent), batch reserves 1.
      const keeping = {
        capacity: 4,
        tiers: { realtime: { reserved: 3, lendable: 3, keep: 1 }, batch: { reserved: 1, lendable: 0 } },
      };
      // Batch holds its own slot and one of realtime's; the free slot is realtime's keep.
      const refused = takeSlot(keeping, { realtime: 1, batch: 2 }, 'batch', {}, 1_000, 1_000, { ask: d1 });
      expect(refused).toEqual({ granted: false, marks: {}, claims: { batch: { ...d1, until: 2_000 } } });
      // A batch call ends: d0, asking first for a later waiter, leaves the slot to d1's...
      const d0 = { asker: 'd0', deadline: 9_000 };
      expect(
        takeSlot(keeping, { realtime: 1, batch: 1 }, 'batch', {}, 1_100, 1_000, { ask: d0, claims: refused.claims })
          .granted,
      ).toBe(false);
      // ... and d1's grant ends its claim.
      expect(
        takeSlot(keeping, { realtime: 1, batch: 1 }, 'batch', {}, 1_100, 1_000, { ask: d1, claims: refused.claims }),
      ).toEqual({ granted: true, marks: {}, claims: {} });
      // Refused while a slot beyond the keep is free, the claimant drops its claim (its spec, not the race).
      const lendsNone = { ...keeping, tiers: { ...keeping.tiers, realtime: { reserved: 3, lendable: 0, keep: 1 } } };
      expect(takeSlot(lendsNone, { batch: 2 }, 'batch', {}, 1_100, 1_000, { ask: d1, claims: refused.claims })).toEqual(
        { granted: false, marks: {}, claims: {} },
      );
    });

    it('a claim ends at its lapse or its deadline; an earlier refused deadline takes it over', () => {
      const claims = { realtime: { ...d1, until: 2_000 } };
      const later = { asker: 'd0', deadline: 9_000 };
      expect(takeSlot(spec, { realtime: 2 }, 'realtime', {}, 2_000, 1_000, { ask: later, claims }).granted).toBe(true);
      expect(
        takeSlot(spec, { realtime: 2 }, 'realtime', {}, 1_500, 1_000, {
          ask: later,
          claims: {
            realtime: { ...d1, deadline: 1_500, until: 2_000 },
          },
        }).granted,
      ).toBe(true);
      expect(
        takeSlot(spec, { realtime: 3 }, 'realtime', {}, 1_500, 1_000, { ask: { asker: 'd2', deadline: 4_000 }, claims })
          .claims,
      ).toEqual({
        realtime: { asker: 'd2', deadline: 4_000, until: 2_500 },
      });
    });
  });

  describe('takeSlot yielding to heavier tiers (yieldTo)', () => {
    // 4 slots: realtime reserves 2, batch 1, offline 1. Batch waits in another dispatcher: its claim stands.
    const tiers = (offlineLends: number) => ({
      capacity: 4,
      tiers: {
        realtime: { reserved: 2, lendable: 0 },
        batch: { reserved: 1, lendable: 0 },
        offline: { reserved: 1, lendable: offlineLends },
      },
    });
    const claims = { batch: { asker: 'd1', deadline: 9_000, until: 2_000 } };
    const offline = { asker: 'd0', deadline: 3_600_000 };
    const take = (
      gate: ReturnType<typeof tiers>,
      inUse: Record<string, number>,
      marks = {},
      yieldTo = ['realtime', 'batch'],
    ) => takeSlot(gate, inUse, 'offline', marks, 1_000, 1_000, { ask: offline, claims, yieldTo });

    it('leaves the claimant a slot it could take, its own reservation included, and drops its reclaim mark', () => {
      // The free slot is offline's own, and offline lends it: batch could take it.
      expect(take(tiers(1), { realtime: 2, batch: 1 }, { offline: 1_500 })).toEqual({
        granted: false,
        marks: {},
        claims,
      });
      // Pressed, it yields to nothing: its reservation is its own.
      expect(take(tiers(1), { realtime: 2, batch: 1 }, {}, []).granted).toBe(true);
      // With no claim standing, nothing waits to yield to.
      expect(
        takeSlot(tiers(1), { realtime: 2, batch: 1 }, 'offline', {}, 1_000, 1_000, {
          ask: offline,
          claims: {},
          yieldTo: ['batch'],
        }).granted,
      ).toBe(true);
    });

    it('takes a slot the claimant could not take anyway', () => {
      // Offline lends nothing, realtime lends nothing: batch, at its reservation, may not borrow the free slots.
      expect(take(tiers(0), { realtime: 1, batch: 1 }).granted).toBe(true);
    });

    it('refused by a full room, sets no reclaim mark: it would keep its idle slot from the tier it yields to', () => {
      expect(take(tiers(1), { realtime: 2, batch: 2 }).marks).toEqual({});
      expect(take(tiers(1), { realtime: 2, batch: 2 }, {}, []).marks).toEqual({ offline: 2_000 });
    });

    it('sets no reclaim mark, and drops its own, with no claim standing too: the tier it yields to may borrow its idle slot', () => {
      // Batch's claim ends at batch's refusal with a slot free; a mark set then kept offline's idle
      // slot from batch until offline itself took it.
      const refusal = (yieldTo: string[]) =>
        takeSlot(tiers(1), { realtime: 2, batch: 2 }, 'offline', { offline: 1_500 }, 1_000, 1_000, {
          ask: offline,
          claims: {},
          yieldTo,
        });
      const batchAfter = (marks: Record<string, number>) =>
        takeSlot(tiers(1), { realtime: 2, batch: 1 }, 'batch', marks, 1_100, 1_000, {
          ask: { asker: 'd1', deadline: 9_000 },
        }).granted;
      expect(refusal(['realtime', 'batch']).marks).toEqual({});
      expect(batchAfter(refusal(['realtime', 'batch']).marks)).toBe(true);
      // Pressed, it yields to nothing and reclaims its slot.
      expect(refusal([]).marks).toEqual({ offline: 2_000 });
      expect(batchAfter(refusal([]).marks)).toBe(false);
    });
  });

  it('never exceeds capacity, and never refuses a tier under its reservation while a slot is free (property)', () => {
    const tiers = ['realtime', 'batch', 'offline'];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...tiers), { maxLength: 200 }),
        fc.array(fc.nat(), { maxLength: 200 }),
        fc.subarray(tiers),
        (arrivals, departures, reclaiming) => {
          const inUse: Record<string, number> = {};
          arrivals.forEach((tier, i) => {
            const total = Object.values(inUse).reduce((a, b) => a + b, 0);
            const ok = mayTakeSlot(spec, inUse, tier, new Set(reclaiming));
            if ((inUse[tier] ?? 0) < spec.tiers[tier]!.reserved && total < spec.capacity) expect(ok).toBe(true);
            if (ok) inUse[tier] = (inUse[tier] ?? 0) + 1;
            expect(Object.values(inUse).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(spec.capacity);
            const leaving = tiers[(departures[i] ?? 0) % 3]!;
            if ((departures[i] ?? 0) % 2 === 0 && (inUse[leaving] ?? 0) > 0) inUse[leaving]!--;
          });
        },
      ),
    );
  });
});
