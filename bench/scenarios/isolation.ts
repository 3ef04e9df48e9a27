/**
 * The first seed's Suspend-vs-Sleep experiment on the embedded engine, under a
 * virtual clock: 50 LiteTopics share one pool of 50 workers; some LiteTopics are
 * throttled (a leaky bucket letting one message through every 300 ms). A throttled
 * message either returns Suspend(wait), freeing its worker, or sleeps in the
 * handler, holding it. We measure what the healthy LiteTopics get done.
 */
import { sleep } from '../../lib/clock/clock.js';
import { VirtualClock } from '../../lib/clock/virtual-clock.js';
import { pace } from '../../lib/limits/gcra.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import { Consume } from '../../lib/queue/types.js';

export interface IsolationOptions {
  readonly mode: 'suspend' | 'sleep' | 'unthrottled';
  readonly liteTopics?: number;
  readonly workers?: number;
  readonly throttled: number;
  readonly throttleMs?: number;
  /** Handler time for a message that goes through (the upstream call). */
  readonly serviceMs?: number;
  /** Messages of one LiteTopic in flight at once: the broker's concurrent pop batch. */
  readonly inFlightPerTopic?: number;
  readonly durationMs?: number;
}

export interface IsolationResult {
  readonly mode: IsolationOptions['mode'];
  readonly throttled: number;
  /** Healthy LiteTopics' completed messages per second, all of them together. */
  readonly healthyPerSec: number;
  readonly throttledPerSec: number;
}

export async function runIsolation(options: IsolationOptions): Promise<IsolationResult> {
  const liteTopics = options.liteTopics ?? 50;
  const workers = options.workers ?? 50;
  const throttleMs = options.throttleMs ?? 300;
  const serviceMs = options.serviceMs ?? 20;
  const durationMs = options.durationMs ?? 3_000;
  const clock = new VirtualClock(0);
  const queue = new EmbeddedLiteQueue({ clock, maxInFlightPerTopic: options.inFlightPerTopic ?? 10 });
  const isThrottled = (topic: string) => Number(topic.slice(1)) < options.throttled;
  const tats = new Map<string, number | undefined>();
  const bucket = { rate: 1000 / throttleMs, burst: 1 };

  // Enough backlog that no LiteTopic runs dry within the measured window.
  const backlog = Math.ceil((durationMs / serviceMs) * (workers / Math.max(1, liteTopics - options.throttled))) + 10;
  for (let t = 0; t < liteTopics; t++) {
    const topic = `t${t}`;
    // Unthrottled reference: the throttled LiteTopics have nothing to send at all.
    if (options.mode === 'unthrottled' && isThrottled(topic)) continue;
    for (let i = 0; i < (isThrottled(topic) ? 200 : backlog); i++) await queue.send(topic, '');
  }

  let healthy = 0;
  let throttled = 0;
  queue.subscribe(async (m) => {
    if (isThrottled(m.liteTopic)) {
      for (;;) {
        const d = pace(bucket, tats.get(m.liteTopic), clock.now());
        if (d.waitMs === 0) {
          tats.set(m.liteTopic, d.tat);
          break;
        }
        if (options.mode === 'suspend') return Consume.suspend(d.waitMs);
        await sleep(clock, d.waitMs);
      }
    }
    await sleep(clock, serviceMs);
    if (clock.now() <= durationMs) {
      if (isThrottled(m.liteTopic)) throttled++;
      else healthy++;
    }
    return Consume.success;
  }, { concurrency: workers });
  await clock.runUntil(durationMs);
  return {
    mode: options.mode,
    throttled: options.throttled,
    healthyPerSec: (healthy * 1000) / durationMs,
    throttledPerSec: (throttled * 1000) / durationMs,
  };
}

/** What the pool owes the healthy LiteTopics: unthrottled throughput minus the workers the throttled ones' paced releases take. */
function owed(reference: IsolationResult, suspend: IsolationResult): number {
  return reference.healthyPerSec - suspend.throttledPerSec;
}

/** The lab scenario: the experiment for 5 and for 40 throttled LiteTopics, in every mode. */
export const isolation = {
  name: 'isolation',
  description: "the first seed's Suspend-vs-Sleep experiment: 50 LiteTopics, 50 workers, 5 and 40 throttled for 300 ms",
  async run(ctx: { seed: number; size: 'full' | 'small'; log: (line: string) => void }) {
    const durationMs = ctx.size === 'full' ? 10_000 : 3_000;
    const rows: (string | number)[][] = [];
    const headline: Record<string, number> = {};
    const runs: IsolationResult[] = [];
    for (const throttled of [5, 40]) {
      ctx.log(`isolation: ${throttled} throttled of 50, ${durationMs} ms`);
      const reference = await runIsolation({ mode: 'unthrottled', throttled, durationMs });
      const suspend = await runIsolation({ mode: 'suspend', throttled, durationMs });
      const sleep = await runIsolation({ mode: 'sleep', throttled, durationMs });
      runs.push(reference, suspend, sleep);
      const suspendShare = suspend.healthyPerSec / owed(reference, suspend);
      const sleepShare = sleep.healthyPerSec / reference.healthyPerSec;
      headline[`suspendHealthyShare${throttled}`] = Math.round(suspendShare * 1000) / 1000;
      headline[`sleepHealthyShare${throttled}`] = Math.round(sleepShare * 1000) / 1000;
      rows.push(
        [throttled, 'unthrottled reference', reference.healthyPerSec, reference.throttledPerSec, '100%'],
        [throttled, 'Suspend(wait)', suspend.healthyPerSec, suspend.throttledPerSec, `${(100 * suspendShare).toFixed(1)}% of owed`],
        [throttled, 'sleep in handler', sleep.healthyPerSec, sleep.throttledPerSec, `${(100 * sleepShare).toFixed(1)}% of unthrottled`],
      );
    }
    return {
      scenario: 'isolation',
      seed: ctx.seed,
      size: ctx.size,
      params: { liteTopics: 50, workers: 50, throttleMs: 300, serviceMs: 20, inFlightPerTopic: 10, durationMs, note: 'virtual clock, embedded engine; the seed is not used (no randomness)' },
      headline,
      tables: [
        {
          title: 'healthy LiteTopics under Suspend vs sleep (messages per second, all healthy LiteTopics together)',
          columns: ['throttled', 'mode', 'healthy msg/s', 'throttled msg/s', 'healthy share'],
          rows,
        },
      ],
      details: { runs },
    };
  },
};
