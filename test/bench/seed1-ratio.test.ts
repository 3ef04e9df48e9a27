import { describe, expect, it } from 'vitest';
import { seed1Full, seed1Ratio, seed1Small } from '../../bench/scenarios/seed1-ratio.js';
import type { ScenarioOutput } from '../../bench/scenarios/types.js';

// Clients resend refusals the way the OpenAI SDKs do by default (two resends, Retry-After
// honored under 60 s); the scenario also replays the same traffic from clients that never
// resend (the noRetry* figures).
function expectSeedFigures(out: ScenarioOutput) {
  const h = out.headline;
  const c = out.comparison!;
  // The baseline does refuse: the bursts outrun the GPU.
  expect(h.baselineRefused as number).toBeGreaterThan(100);
  // The first seed's claim: a rate-limited ratio at least 10x lower (null: Sluice refused nothing).
  if (h.sluiceRefused === 0) expect(h.refusalReduction).toBeNull();
  else expect(h.refusalReduction as number).toBeGreaterThanOrEqual(10);
  expect(h.sluiceRefusedRatio as number).toBeLessThanOrEqual((h.baselineRefusedRatio as number) / 10);
  // Sluice refuses nothing within quota, and over quota no more than the hard limiter.
  expect(h.sluiceWithinQuotaRefusals).toBe(0);
  expect(h.baselineWithinQuotaRefusals as number).toBeGreaterThan(0);
  expect(h.sluiceQuotaRefusals as number).toBeLessThanOrEqual(h.baselineQuotaRefusals as number);
  // Zero GPU overload: nothing refused by the GPU, nothing queued inside it beyond its slots.
  expect(h.sluiceGpuOverload).toBe(0);
  expect(h.baselineGpuOverload as number).toBeGreaterThan(0);
  // No user-visible failure through Sluice; some through the hard limiter even after resends.
  expect(h.sluiceRequestsFailed).toBe(0);
  expect(h.baselineRequestsFailed as number).toBeGreaterThan(0);
  // Every request got an answer, and both systems saw the same requests.
  expect(c.sluice.unanswered).toBe(0);
  expect(c.baseline.unanswered).toBe(0);
  expect(c.sluice.total.requests).toBe(c.baseline.total.requests);
  expect(c.sluice.total.ok + c.sluice.total.refused).toBe(c.sluice.total.sent);
  // Resends only add refusals at the baseline: without them its ratio is lower.
  expect(h.noRetryBaselineRefusedRatio as number).toBeLessThan(h.baselineRefusedRatio as number);
}

describe('seed1-ratio', () => {
  it('full size, seed 1 (20 tenants, 10 min, 16 GPU slots): ≥ 10x lower rate-limited ratio, zero GPU overload', { timeout: 180_000 }, async () => {
    const out = await seed1Ratio.run({ seed: 1, size: 'full', flags: {}, log: () => {} });
    console.log(`seed1-ratio full seed 1: ${JSON.stringify(out.headline)}`);
    expect(seed1Full.tenants).toBe(20);
    expect(out.headline.requests as number).toBeGreaterThan(4000);
    // Seed 1 full has tenants going over quota, so both systems refuse some: the ratio is finite.
    expect(out.headline.sluiceRefused as number).toBeGreaterThan(0);
    expectSeedFigures(out);
  });

  for (const seed of [1, 2]) {
    it(`small, seed ${seed} (10 tenants, 5 min, 8 GPU slots): the same claims`, { timeout: 120_000 }, async () => {
      const out = await seed1Ratio.run({ seed, size: 'small', flags: {}, log: () => {} });
      console.log(`seed1-ratio small seed ${seed}: ${JSON.stringify(out.headline)}`);
      expect(seed1Small.tenants).toBe(10);
      expect(out.headline.requests as number).toBeGreaterThan(1000);
      expectSeedFigures(out);
    });
  }
});
