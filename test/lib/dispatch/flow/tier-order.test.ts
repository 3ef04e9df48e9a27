import { describe, expect, it } from 'vitest';
import { tierOrder } from '../../../../lib/dispatch/flow/tier-order.js';

const spec = new Map([
  ['realtime', { reserved: 4, weight: 6 }],
  ['batch', { reserved: 2, weight: 2 }],
  ['offline', { reserved: 1, weight: 1 }],
]);
const tiers = (turns: ReturnType<typeof tierOrder>) => turns.map((t) => t.tier);

describe('tierOrder', () => {
  it('puts tiers below their reservation first, heavier first', () => {
    expect(tiers(tierOrder(['offline', 'batch', 'realtime'], spec, { realtime: 4, batch: 1, offline: 0 }))).toEqual([
      'batch',
      'offline',
      'realtime',
    ]);
  });

  it('splits what is beyond reservations by weight: fewest borrowed slots per unit of weight next', () => {
    // batch borrows 2 (per weight 1.5 after one more), offline 0 (1 after one more): offline next.
    expect(tiers(tierOrder(['batch', 'offline'], spec, { batch: 4, offline: 1 }))).toEqual(['offline', 'batch']);
    // Both at their reservation: one more costs batch 1/2 per weight, offline 1.
    expect(tiers(tierOrder(['batch', 'offline'], spec, { batch: 2, offline: 1 }))).toEqual(['batch', 'offline']);
  });

  it('treats a tier missing from the spec as weight 1 with nothing reserved', () => {
    expect(tiers(tierOrder(['other', 'realtime'], spec, { realtime: 4 }))).toEqual(['realtime', 'other']);
  });

  it('a lighter tier whose work is not pressed yields to every heavier waiting tier, its reservation included', () => {
    const notPressed = (tier: string) => tier === 'realtime';
    // offline is below its reservation and batch far beyond its own: offline still asks last, as a borrower.
    expect(tierOrder(['offline', 'batch'], spec, { batch: 6, offline: 0 }, notPressed)).toEqual([
      { tier: 'batch', yields: false },
      { tier: 'offline', yields: true },
    ]);
    // Both yield to realtime; heavier first among them.
    expect(tierOrder(['offline', 'batch', 'realtime'], spec, { realtime: 6 }, notPressed)).toEqual([
      { tier: 'realtime', yields: false },
      { tier: 'batch', yields: true },
      { tier: 'offline', yields: true },
    ]);
  });

  it('pressed work claims its reservation again, and the heaviest waiting tier never yields', () => {
    const pressed = (tier: string) => tier === 'offline';
    expect(tierOrder(['offline', 'batch', 'realtime'], spec, { realtime: 6, batch: 4, offline: 0 }, pressed)).toEqual([
      { tier: 'offline', yields: false },
      { tier: 'realtime', yields: false },
      { tier: 'batch', yields: true },
    ]);
    expect(tierOrder(['offline', 'batch'], spec, { batch: 2 }, () => false)).toEqual([
      { tier: 'batch', yields: false },
      { tier: 'offline', yields: true },
    ]);
  });
});
