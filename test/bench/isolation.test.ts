import { describe, expect, it } from 'vitest';
import { isolation, runIsolation } from '../../bench/scenarios/isolation.js';

// The first seed's experiment: 50 LiteTopics, 50 workers, 5 and then 40 throttled for 300 ms.
// Shares are against the healthy LiteTopics' throughput with nothing throttled, and against
// what the pool owes them: the same with the throttled LiteTopics paced at the source.
describe('isolation: Suspend vs Sleep', () => {
  for (const throttled of [5, 40]) {
    it(`concurrent group (10 in flight per LiteTopic), ${throttled} throttled: Suspend keeps the healthy LiteTopics' throughput, Sleep starves them`, async () => {
      const inFlightPerTopic = 10;
      const reference = await runIsolation({ mode: 'unthrottled', throttled, inFlightPerTopic });
      const owed = await runIsolation({ mode: 'paced', throttled, inFlightPerTopic });
      const suspend = await runIsolation({ mode: 'suspend', throttled, inFlightPerTopic });
      const sleep = await runIsolation({ mode: 'sleep', throttled, inFlightPerTopic });
      console.log(
        `throttled=${throttled} healthy msg/s: unthrottled ${reference.healthyPerSec}, suspend ${suspend.healthyPerSec} (${((100 * suspend.healthyPerSec) / reference.healthyPerSec).toFixed(1)}%), sleep ${sleep.healthyPerSec} (${((100 * sleep.healthyPerSec) / reference.healthyPerSec).toFixed(1)}%)`,
      );
      expect(reference.healthyPerSec).toBeGreaterThan(0);
      // The throttled LiteTopics' allowed releases take workers too (paced at the source, they
      // still cost the healthy ones ~5 % of the pool at 40 throttled): that much nobody can give back.
      expect(owed.healthyPerSec).toBeLessThanOrEqual(reference.healthyPerSec);
      expect(owed.throttledPerSec).toBe(suspend.throttledPerSec);
      // Suspend: the healthy LiteTopics keep what the pool owes them.
      expect(suspend.healthyPerSec).toBeGreaterThanOrEqual(0.95 * owed.healthyPerSec);
      expect(suspend.healthyPerSec).toBeGreaterThanOrEqual(0.9 * reference.healthyPerSec);
      // Throttled LiteTopics still get their paced share in both modes.
      expect(suspend.throttledPerSec).toBeGreaterThan(0);
      if (throttled === 40) expect(sleep.healthyPerSec).toBeLessThan(0.25 * reference.healthyPerSec);
      else expect(sleep.healthyPerSec).toBeLessThan(0.5 * suspend.healthyPerSec);
    });

    it(`FIFO group (one message per LiteTopic at a time), ${throttled} throttled: with a worker per LiteTopic, sleep holds one worker per throttled LiteTopic and starves nobody`, async () => {
      const inFlightPerTopic = 1;
      const reference = await runIsolation({ mode: 'unthrottled', throttled, inFlightPerTopic });
      const suspend = await runIsolation({ mode: 'suspend', throttled, inFlightPerTopic });
      const sleep = await runIsolation({ mode: 'sleep', throttled, inFlightPerTopic });
      expect(suspend.healthyPerSec).toBeGreaterThanOrEqual(0.95 * reference.healthyPerSec);
      expect(sleep.healthyPerSec).toBeGreaterThanOrEqual(0.95 * reference.healthyPerSec);
      expect(sleep.throttledPerSec).toBe(suspend.throttledPerSec);
    });
  }

  it('the scenario states both modes against the same unthrottled run, for both groups', async () => {
    const out = await isolation.run({ seed: 1, size: 'small', log: () => {} });
    for (const group of ['fifo', 'concurrent']) {
      for (const n of [5, 40]) {
        expect(out.headline[`${group}SuspendHealthyShare${n}`]).toBeGreaterThan(0);
        expect(out.headline[`${group}SleepHealthyShare${n}`]).toBeGreaterThanOrEqual(0);
        expect(out.headline[`${group}SuspendHealthyShareOfOwed${n}`]).toBeGreaterThanOrEqual(0.95);
      }
    }
    expect(out.headline.concurrentSleepHealthyShare40).toBeLessThan(out.headline.concurrentSuspendHealthyShare40!);
    expect(out.tables[0]!.rows).toHaveLength(16);
  });
});
