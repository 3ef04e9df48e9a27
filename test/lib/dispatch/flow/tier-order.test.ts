import { describe, expect, it } from 'vitest';
import { tierOrder } from '../../../../lib/dispatch/flow/tier-order.js';

const spec = new Map([
  ['realtime', { reserved: 4, weight: 6 }],
  ['batch', { reserved: 2, weight: 2 }],
  ['offline', { reserved: 1, weight: 1 }],
]);

describe('tierOrder', () => {
  it('puts tiers below their reservation first, heavier first', () => {
    expect(tierOrder(['offline', 'batch', 'realtime'], spec, { realtime: 4, batch: 1, offline: 0 })).toEqual(['batch', 'offline', 'realtime']);
  });

  it('splits what is beyond reservations by weight: fewest borrowed slots per unit of weight next', () => {
    // batch borrows 2 (per weight 1.5 after one more), offline 0 (1 after one more): offline next.
    expect(tierOrder(['batch', 'offline'], spec, { batch: 4, offline: 1 })).toEqual(['offline', 'batch']);
    // Both at their reservation: one more costs batch 1/2 per weight, offline 1.
    expect(tierOrder(['batch', 'offline'], spec, { batch: 2, offline: 1 })).toEqual(['batch', 'offline']);
  });

  it('treats a tier missing from the spec as weight 1 with nothing reserved', () => {
    expect(tierOrder(['other', 'realtime'], spec, { realtime: 4 })).toEqual(['realtime', 'other']);
  });
});
