import { describe, expect, it } from 'vitest';
import { flood } from '../../bench/scenarios/flood.js';
import { defaultTiers } from '../../lib/policy/defaults.js';

describe('flood (small: 450 batch requests from 30 accounts in 50 s on 4 GPU slots)', () => {
  it(
    "serves more in time than any baseline, never overloads the GPU, and refuses most of what it cannot serve at once (the dispatchers' fair-share level at the edge)",
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
      expect(h.fcfsBatchRefusedAfterP99Ms).toBeGreaterThan(defaultTiers.batch!.maxQueueWaitMs);
    },
  );
});
