import { describe, expect, it } from 'vitest';
import { seed1Ratio, seed1Small } from '../../bench/scenarios/seed1-ratio.js';

// Scaled down for CI (bench/scenarios/seed1-ratio.ts `seed1Small`): 10 tenants, 5 minutes,
// 8 GPU slots; the full run (`npm run bench -- seed1-ratio`) has 20 tenants, 10 minutes, 16 slots.
// Seed 1 small refuses nothing in Sluice; seed 2 small has over-quota tenants, so its ratio is
// finite. Known gap, not asserted here: the full run with seed 1 gives 8.6x (387 vs 45, all 45
// over-quota refusals the baseline makes as well); seeds 2-5 full give infinity, infinity,
// infinity and 71.9x.
describe('seed1-ratio (small: 10 tenants, 5 min, 8 GPU slots)', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: Sluice refuses at least 10x fewer requests than the hard limiter, with zero GPU overload`, { timeout: 120_000 }, async () => {
      const out = await seed1Ratio.run({ seed, size: 'small', flags: {}, log: () => {} });
      const h = out.headline;
      console.log(`seed1-ratio small seed ${seed}: ${JSON.stringify(h)}`);
      expect(seed1Small.tenants).toBe(10);
      expect(h.requests).toBeGreaterThan(1000);
      // The baseline does refuse: the bursts outrun the GPU.
      expect(h.baselineRefused as number).toBeGreaterThan(100);
      expect(h.sluiceRefused as number).toBeLessThanOrEqual((h.baselineRefused as number) / 10);
      // Quota refusals are one rule in both systems; Sluice refuses nothing within quota.
      expect(h.sluiceQuotaRefusals).toBe(h.baselineQuotaRefusals);
      expect(h.sluiceWithinQuotaRefusals as number).toBeLessThanOrEqual(0.01 * (h.baselineWithinQuotaRefusals as number));
      // Zero GPU overload: nothing refused by the GPU, nothing queued inside it beyond its slots.
      expect(h.sluiceGpuOverload).toBe(0);
      expect(h.baselineGpuOverload as number).toBeGreaterThan(0);
      const c = out.comparison!;
      expect(c.sluice.unanswered).toBe(0);
      expect(c.baseline.unanswered).toBe(0);
      // Every request got an answer, and both systems saw the same traffic.
      expect(c.sluice.total.sent).toBe(c.baseline.total.sent);
      expect(c.sluice.total.ok + c.sluice.total.refused).toBe(c.sluice.total.sent);
    });
  }
});
