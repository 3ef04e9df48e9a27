import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flood } from '../../bench/scenarios/flood.js';
import { defaultTiers } from '../../lib/policy/defaults.js';

describe('flood (small: 450 batch requests from 30 accounts in 50 s on 4 GPU slots)', () => {
  it(
    "serves more in time than any baseline, never overloads the GPU, and refuses most of what it cannot serve at once (the dispatchers' fair-share level at the edge, and places shed from the LiteTopics)",
    { timeout: 120_000 },
    async () => {
      const out = await flood.run({ seed: 1, size: 'small', flags: {}, log: () => {} });
      const h = out.headline as Record<string, number>;
      console.log(`flood small: ${JSON.stringify(h)}`);
      expect(h.sluiceBatchGoodput).toBeGreaterThan(h.bestBaselineBatchGoodput!);
      expect(h.sluiceGpuRefused).toBe(0);
      // The engine-queue baselines' clients hear nothing until they give up (10 min).
      expect(h.sluiceBatchRefusedAfterP99Ms).toBeLessThanOrEqual(defaultTiers.batch!.maxQueueWaitMs);
      // Without the level, at the head of its LiteTopic near the end of batch's wait (p50 ~290 s).
      expect(h.sluiceBatchRefusedAfterP50Ms).toBeLessThan(defaultTiers.batch!.maxQueueWaitMs / 10);
      // What was admitted before the level came is shed from its LiteTopic once its flow's share
      // cannot reach it: without that, answered at its deadline (p90 the whole wait).
      expect(h.sluiceBatchRefusedAfterP90Ms).toBeLessThan(defaultTiers.batch!.maxQueueWaitMs / 2);
      expect(h.fcfsBatchRefusedAfterP99Ms).toBeGreaterThan(defaultTiers.batch!.maxQueueWaitMs);
    },
  );

  it(
    'with the level off (bench/policies/no-fair-share.json: the default tiers, fairShareAtAdmission false), what it cannot serve hears so near the end of the wait',
    { timeout: 120_000 },
    async () => {
      const file = 'bench/policies/no-fair-share.json';
      const tiers = (JSON.parse(readFileSync(file, 'utf8')) as { tiers: Record<string, object> }).tiers;
      expect(tiers).toEqual(
        Object.fromEntries(Object.entries(defaultTiers).map(([k, v]) => [k, { ...v, fairShareAtAdmission: false }])),
      );
      const out = await flood.run({ seed: 1, size: 'small', flags: { policy: file }, log: () => {} });
      const h = out.headline as Record<string, number>;
      expect(h.sluiceBatchRefusedAfterP50Ms).toBeGreaterThan(defaultTiers.batch!.maxQueueWaitMs / 2);
      expect(h.sluiceBatchRefusedAfterP90Ms).toBeGreaterThan(defaultTiers.batch!.maxQueueWaitMs / 2);
    },
  );
});
