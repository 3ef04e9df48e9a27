import { expect, it } from 'vitest';
import { drainMsOf, LAB_MODEL, type World } from '../../../bench/lib/world.js';
import { defaultLimits, defaultTiers } from '../../../lib/policy/defaults.js';

const world: World = {
  name: 'drain',
  trace: [{ t: 0, account: 'a', model: LAB_MODEL, tokens: 10 }],
  accounts: { a: { tenant: 't', tier: 'batch' } },
  tiers: defaultTiers,
  defaults: defaultLimits,
  gpu: { slots: 1 },
};

it('waits for answers past the longest maximum wait, so an overloaded trace drains instead of stalling', () => {
  const longest = Math.max(...Object.values(defaultTiers).map((t) => t.maxQueueWaitMs!));
  expect(drainMsOf(world)).toBeGreaterThan(longest);
  const shortTiers = Object.fromEntries(
    Object.entries(defaultTiers).map(([name, t]) => [name, { ...t, maxQueueWaitMs: 1_000 }]),
  ) as World['tiers'];
  expect(drainMsOf({ ...world, tiers: shortTiers })).toBeLessThan(longest);
  expect(drainMsOf({ ...world, drainMs: 5_000 })).toBe(5_000);
});
