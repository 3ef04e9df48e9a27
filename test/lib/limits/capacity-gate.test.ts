import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gateFromShares, mayTakeSlot } from '../../../lib/limits/capacity-gate.js';

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
    while (mayTakeSlot(spec, inUse, 'batch')) inUse = { batch: inUse.batch + 1 }, extra++;
    expect(extra).toBe(7);
  });

  it('stops lending as soon as the lender needs its slots', () => {
    // batch borrowed 6 from realtime; realtime now busy with 8: its idle 4 lends min(4, 6) = 4 < 6 borrowed.
    expect(mayTakeSlot(spec, { batch: 11, realtime: 8 }, 'batch')).toBe(false);
    expect(mayTakeSlot(spec, { batch: 11, realtime: 8 }, 'realtime')).toBe(true);
  });

  it('never exceeds capacity, and never refuses a tier under its reservation while a slot is free (property)', () => {
    const tiers = ['realtime', 'batch', 'offline'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...tiers), { maxLength: 200 }), fc.array(fc.nat(), { maxLength: 200 }), (arrivals, departures) => {
        const inUse: Record<string, number> = {};
        arrivals.forEach((tier, i) => {
          const total = Object.values(inUse).reduce((a, b) => a + b, 0);
          const ok = mayTakeSlot(spec, inUse, tier);
          if ((inUse[tier] ?? 0) < spec.tiers[tier]!.reserved && total < spec.capacity) expect(ok).toBe(true);
          if (ok) inUse[tier] = (inUse[tier] ?? 0) + 1;
          expect(Object.values(inUse).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(spec.capacity);
          const leaving = tiers[(departures[i] ?? 0) % 3]!;
          if ((departures[i] ?? 0) % 2 === 0 && (inUse[leaving] ?? 0) > 0) inUse[leaving]!--;
        });
      }),
    );
  });
});
