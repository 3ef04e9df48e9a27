import { describe, expect, it } from 'vitest';
import { runIsolation } from '../../bench/scenarios/isolation.js';

// The first seed's experiment: 50 LiteTopics, 50 workers, 5 and then 40 throttled for 300 ms.
describe('isolation: Suspend vs Sleep', () => {
  for (const throttled of [5, 40]) {
    it(`${throttled} throttled: Suspend keeps the healthy LiteTopics' throughput, Sleep starves them`, async () => {
      const reference = await runIsolation({ mode: 'unthrottled', throttled });
      const suspend = await runIsolation({ mode: 'suspend', throttled });
      const sleep = await runIsolation({ mode: 'sleep', throttled });
      console.log(
        `throttled=${throttled} healthy msg/s: unthrottled ${reference.healthyPerSec}, suspend ${suspend.healthyPerSec} (${((100 * suspend.healthyPerSec) / reference.healthyPerSec).toFixed(1)}%), sleep ${sleep.healthyPerSec} (${((100 * sleep.healthyPerSec) / reference.healthyPerSec).toFixed(1)}%)`,
      );
      expect(reference.healthyPerSec).toBeGreaterThan(0);
      // The throttled LiteTopics' paced releases take workers too (same service time):
      // what the pool owes the healthy ones is the rest.
      const leftForHealthy = reference.healthyPerSec - suspend.throttledPerSec;
      expect(suspend.healthyPerSec).toBeGreaterThanOrEqual(0.95 * leftForHealthy);
      // Throttled LiteTopics still get their paced share in both modes.
      expect(suspend.throttledPerSec).toBeGreaterThan(0);
      if (throttled === 40) expect(sleep.healthyPerSec).toBeLessThan(0.25 * reference.healthyPerSec);
      else expect(sleep.healthyPerSec).toBeLessThan(suspend.healthyPerSec);
    });
  }
});
