/**
 * The first seed's Suspend-vs-Sleep experiment on the embedded engine, under a
 * virtual clock: 50 LiteTopics share one pool of 50 workers; some LiteTopics are
 * throttled (a leaky bucket letting one message through every 300 ms). A throttled
 * message either returns Suspend(wait), freeing its worker, or sleeps in the
 * handler, holding it. We measure what the healthy LiteTopics get done.
 *
 * Two references: nothing throttled at all (the throttled LiteTopics send nothing), and
 * paced at the source (they send exactly what their bucket lets through, so nothing has
 * to wait). The second is what the pool owes the healthy LiteTopics: the throttled ones'
 * allowed releases take workers too, and no way of waiting can give those back.
 */
import { sleep } from '../../lib/clock/clock.js';
import { VirtualClock } from '../../lib/clock/virtual-clock.js';
import { pace } from '../../lib/limits/gcra.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import { Consume } from '../../lib/queue/types.js';

export interface IsolationOptions {
  readonly mode: 'suspend' | 'sleep' | 'unthrottled' | 'paced';
  readonly liteTopics?: number;
  readonly workers?: number;
  readonly throttled: number;
  readonly throttleMs?: number;
  /** Handler time for a message that goes through (the upstream call). */
  readonly serviceMs?: number;
  /** Messages of one LiteTopic in flight at once: 1 on a FIFO consumer group, the pop batch on a concurrent one. */
  readonly inFlightPerTopic: number;
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
  const queue = new EmbeddedLiteQueue({ clock, maxInFlightPerTopic: options.inFlightPerTopic });
  const isThrottled = (topic: string) => Number(topic.slice(1)) < options.throttled;
  const tats = new Map<string, number | undefined>();
  const bucket = { rate: 1000 / throttleMs, burst: 1 };

  // Enough backlog that no LiteTopic runs dry within the measured window.
  const backlog = Math.ceil((durationMs / serviceMs) * (workers / Math.max(1, liteTopics - options.throttled))) + 10;
  for (let t = 0; t < liteTopics; t++) {
    const topic = `t${t}`;
    // Unthrottled reference: the throttled LiteTopics have nothing to send at all.
    if (options.mode === 'unthrottled' && isThrottled(topic)) continue;
    if (options.mode === 'paced' && isThrottled(topic)) {
      // Paced at the source: one message each time the bucket would let one through.
      void (async () => {
        for (let at = 0; at < durationMs; at += throttleMs) {
          await queue.send(topic, '');
          await sleep(clock, throttleMs);
        }
      })();
      continue;
    }
    for (let i = 0; i < (isThrottled(topic) ? 200 : backlog); i++) await queue.send(topic, '');
  }

  let healthy = 0;
  let throttled = 0;
  queue.subscribe(
    async (m) => {
      if (isThrottled(m.liteTopic) && options.mode !== 'paced') {
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
    },
    { concurrency: workers },
  );
  await clock.runUntil(durationMs);
  return {
    mode: options.mode,
    throttled: options.throttled,
    healthyPerSec: (healthy * 1000) / durationMs,
    throttledPerSec: (throttled * 1000) / durationMs,
  };
}

/** Messages of one LiteTopic in flight: a FIFO consumer group runs one per LiteTopic (shard) at a time; a concurrent one pops a batch. */
const GROUPS = [
  { group: 'fifo', inFlightPerTopic: 1 },
  { group: 'concurrent', inFlightPerTopic: 10 },
] as const;

/** The lab scenario: the experiment for 5 and for 40 throttled LiteTopics, in every mode, on a FIFO and on a concurrent group. */
export const isolation = {
  name: 'isolation',
  description: "the first seed's Suspend-vs-Sleep experiment: 50 LiteTopics, 50 workers, 5 and 40 throttled for 300 ms",
  async run(ctx: { seed: number; size: 'full' | 'small'; log: (line: string) => void }) {
    const durationMs = ctx.size === 'full' ? 10_000 : 3_000;
    const rows: (string | number)[][] = [];
    const headline: Record<string, number> = {};
    const runs: (IsolationResult & { group: string; inFlightPerTopic: number })[] = [];
    const share = (x: number, of: number) => (of > 0 ? Math.round((x / of) * 1000) / 1000 : 0);
    for (const { group, inFlightPerTopic } of GROUPS) {
      for (const throttled of [5, 40]) {
        ctx.log(
          `isolation: ${group} group (${inFlightPerTopic} in flight per LiteTopic), ${throttled} throttled of 50, ${durationMs} ms`,
        );
        const reference = await runIsolation({ mode: 'unthrottled', throttled, durationMs, inFlightPerTopic });
        const paced = await runIsolation({ mode: 'paced', throttled, durationMs, inFlightPerTopic });
        const suspend = await runIsolation({ mode: 'suspend', throttled, durationMs, inFlightPerTopic });
        const sleep = await runIsolation({ mode: 'sleep', throttled, durationMs, inFlightPerTopic });
        runs.push(...[reference, suspend, sleep].map((r) => ({ ...r, group, inFlightPerTopic })));
        // One denominator for both modes: the healthy LiteTopics' throughput with nobody throttled.
        headline[`${group}SuspendHealthyShare${throttled}`] = share(suspend.healthyPerSec, reference.healthyPerSec);
        headline[`${group}SleepHealthyShare${throttled}`] = share(sleep.healthyPerSec, reference.healthyPerSec);
        // And against what the pool owes them once the throttled LiteTopics' allowed releases are served.
        headline[`${group}SuspendHealthyShareOfOwed${throttled}`] = share(suspend.healthyPerSec, paced.healthyPerSec);
        headline[`${group}SleepHealthyShareOfOwed${throttled}`] = share(sleep.healthyPerSec, paced.healthyPerSec);
        const pct = (x: number, of: number) => `${(100 * share(x, of)).toFixed(1)}%`;
        const row = (mode: string, r: IsolationResult) => [
          group,
          inFlightPerTopic,
          throttled,
          mode,
          r.healthyPerSec,
          r.throttledPerSec,
          pct(r.healthyPerSec, reference.healthyPerSec),
          pct(r.healthyPerSec, paced.healthyPerSec),
        ];
        rows.push(
          row('unthrottled reference', reference),
          row('paced at the source (owed)', paced),
          row('Suspend(wait)', suspend),
          row('sleep in handler', sleep),
        );
      }
    }
    return {
      scenario: 'isolation',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        liteTopics: 50,
        workers: 50,
        throttleMs: 300,
        serviceMs: 20,
        inFlightPerTopic: { fifo: 1, concurrent: 10 },
        groups:
          'fifo: what a RocketMQ FIFO consumer group runs (one message per LiteTopic, or shard, at a time); concurrent: 10 popped at once',
        share:
          "healthy LiteTopics' messages per second over the same LiteTopics' with nothing throttled (one denominator for Suspend and sleep)",
        shareOfOwed:
          "the same over the healthy LiteTopics' rate when the throttled ones send only what their bucket lets through (paced at the source): their allowed releases take workers that no way of waiting gives back",
        durationMs,
        note: 'virtual clock, embedded engine; the seed is not used (no randomness)',
      },
      headline,
      tables: [
        {
          title:
            'healthy LiteTopics under Suspend vs sleep (messages per second, all healthy LiteTopics together; share of the unthrottled run and of what is owed)',
          columns: [
            'group',
            'in flight per LiteTopic',
            'throttled',
            'mode',
            'healthy msg/s',
            'throttled msg/s',
            'healthy share of unthrottled',
            'healthy share of owed',
          ],
          rows,
        },
      ],
      // `runs` (what the chart draws): the FIFO group, the in-flight count RocketMQ gives a LiteTopic.
      details: {
        runs: runs.filter((r) => r.group === 'fifo'),
        concurrentRuns: runs.filter((r) => r.group === 'concurrent'),
      },
    };
  },
};
