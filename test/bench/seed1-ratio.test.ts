import { describe, expect, it } from 'vitest';
import { seed1Full, seed1Ratio, seed1Small } from '../../bench/scenarios/seed1-ratio.js';
import type { ScenarioOutput } from '../../bench/scenarios/types.js';

// Clients resend refusals the way the OpenAI SDKs do by default (two resends, Retry-After
// honored under 60 s); the scenario also replays the same traffic from clients that never
// resend (the noRetry* figures).
function expectSeedFigures(out: ScenarioOutput) {
  const h = out.headline;
  const c = out.comparison!;
  // Today's baseline (shallow GPU queue) does refuse: the bursts outrun the GPU.
  expect(h.shallowRefused as number).toBeGreaterThan(100);
  // The first seed's claim against that baseline: a rate-limited ratio at least 10x lower (null: Sluice refused none).
  if (h.sluiceRefused === 0) expect(h.refusalReductionVsShallow).toBeNull();
  else expect(h.refusalReductionVsShallow as number).toBeGreaterThanOrEqual(10);
  expect(h.sluiceRefusedRatio as number).toBeLessThanOrEqual((h.shallowRefusedRatio as number) / 10);
  // Sluice refuses nothing within quota, and over quota no more than the shallow baseline.
  expect(h.sluiceWithinQuotaRefusals).toBe(0);
  expect(h.shallowWithinQuotaRefusals as number).toBeGreaterThan(0);
  expect(h.sluiceQuotaRefusals as number).toBeLessThanOrEqual(h.shallowQuotaRefusals as number);
  // Zero GPU overload: nothing refused by the GPU, nothing queued inside it beyond its slots.
  expect(h.sluiceGpuOverload).toBe(0);
  expect(h.shallowGpuOverload as number).toBeGreaterThan(0);
  // The engine-queue baselines queue the bursts inside the GPU instead: it refuses nothing, but holds many.
  for (const b of ['fcfs', 'priority'] as const) {
    expect(c.baselines[b].gpu.refused429 + c.baselines[b].gpu.refused503).toBe(0);
    expect(c.baselines[b].gpu.queuedAtGpu).toBeGreaterThan(0);
  }
  // No user-visible failure through Sluice; some through the shallow baseline even after resends.
  expect(h.sluiceRequestsFailed).toBe(0);
  expect(h.shallowRequestsFailed as number).toBeGreaterThan(0);
  // Every request got an answer, and every system saw the same requests.
  for (const r of [c.sluice, c.baselines.shallow, c.baselines.fcfs, c.baselines.priority]) {
    expect(r.unanswered).toBe(0);
    expect(r.total.requests).toBe(c.sluice.total.requests);
    expect(r.total.ok + r.total.refused).toBe(r.total.sent);
  }
  // Resends only add refusals at the shallow baseline: without them its ratio is lower.
  expect(h.noRetryShallowRefusedRatio as number).toBeLessThan(h.shallowRefusedRatio as number);
  // The comparison with the best baseline is stated, whichever way it goes.
  expect(['shallow', 'fcfs', 'priority']).toContain(h.bestBaselineRefusedRatioIs);
  expect(['better', 'worse', 'tie']).toContain(h.sluiceVsBestStandardWaitP99Ms);
}

describe('seed1-ratio', () => {
  it(
    'full size, seed 1 (20 tenants, 10 min, 16 GPU slots): ≥ 10x lower rate-limited ratio, zero GPU overload',
    { timeout: 400_000 },
    async () => {
      const out = await seed1Ratio.run({ seed: 1, size: 'full', flags: {}, log: () => {} });
      console.log(`seed1-ratio full seed 1: ${JSON.stringify(out.headline)}`);
      expect(seed1Full.tenants).toBe(20);
      expect(out.headline.requests as number).toBeGreaterThan(4000);
      // Seed 1 full has tenants going over quota, so both systems refuse some: the ratio is finite.
      expect(out.headline.sluiceRefused as number).toBeGreaterThan(0);
      expectSeedFigures(out);
    },
  );

  for (const seed of [1, 2]) {
    it(`small, seed ${seed} (10 tenants, 5 min, 8 GPU slots): the same claims`, { timeout: 240_000 }, async () => {
      const out = await seed1Ratio.run({ seed, size: 'small', flags: {}, log: () => {} });
      console.log(`seed1-ratio small seed ${seed}: ${JSON.stringify(out.headline)}`);
      expect(seed1Small.tenants).toBe(10);
      expect(out.headline.requests as number).toBeGreaterThan(1000);
      expectSeedFigures(out);
    });
  }
});
