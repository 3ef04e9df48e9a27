/**
 * The queue on a real RocketMQ 5.5 broker (issue 4), beside the embedded engine:
 *   1. the first seed's isolation experiment: 50 LiteTopics, 50 concurrent handlers,
 *      5 and then 40 throttled to one message per 300 ms: the healthy LiteTopics'
 *      throughput when throttled ones Suspend vs when they sleep in the handler;
 *   2. send -> handler latency at a stated load, RocketMQ vs the embedded engine;
 *   3. many LiteTopics: N fresh LiteTopics with one message each, time until all are
 *      delivered and the latency at that count.
 * Starts its own namesrv, broker and proxy (scripts/rocketmq). Real time throughout.
 *   npm run bench -- queue [--seconds 8] [--topics 1000,10000]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { systemClock } from '../functions/runtime/system-clock.js';
import { sleep } from '../lib/clock/clock.js';
import { pace } from '../lib/limits/gcra.js';
import { EmbeddedLiteQueue } from '../lib/queue/embedded.js';
import { RocketMQLiteQueue } from '../lib/queue/rocketmq/index.js';
import { Consume, type LiteQueue, type MessageHandler } from '../lib/queue/types.js';
import { startRocketMQ } from '../scripts/rocketmq/index.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, topics: { type: 'string', default: '1000,10000' } } });
const SECONDS = Number(values.seconds);
const TOPIC_COUNTS = values.topics.split(',').map(Number);
const log = (line: string) => process.stderr.write(`[queue bench] ${line}\n`);

const mq = await startRocketMQ({ log });
const open: LiteQueue[] = [];

async function brokerQueue(tag: string): Promise<LiteQueue> {
  const id = `${tag}-${randomUUID().slice(0, 8)}`;
  await mq.createLiteTopic(`bench-${id}`);
  await mq.createWildcardGroup(`bench-g-${id}`, `bench-${id}`, { orderly: true, maxAttempts: 16 });
  const q = new RocketMQLiteQueue({ endpoints: mq.endpoints, parentTopic: `bench-${id}`, consumerGroup: `bench-g-${id}`, clock: systemClock, onDeadLetter: () => undefined });
  open.push(q);
  return q;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Sends in waves, so the proxy is not handed thousands of calls at once. */
async function sendAll(q: LiteQueue, topics: readonly string[], body = () => 'x'): Promise<void> {
  for (let i = 0; i < topics.length; i += 300) await Promise.all(topics.slice(i, i + 300).map((t) => q.send(t, body())));
}

/** 1. Isolation: healthy LiteTopics' completed messages per second while the others are throttled. */
async function isolation(mode: 'unthrottled' | 'suspend' | 'sleep', throttled: number): Promise<number> {
  const q = await brokerQueue(`iso-${mode}-${throttled}`);
  const serviceMs = 50;
  const isThrottled = (t: string) => Number(t.slice(1)) < throttled;
  const tats = new Map<string, number | undefined>();
  const backlog: string[] = [];
  for (let t = 0; t < 50; t++) {
    const topic = `t${t}`;
    if (mode === 'unthrottled' && isThrottled(topic)) continue;
    // Enough that no healthy LiteTopic runs dry (one in flight each: at most 20/s).
    for (let i = 0; i < (isThrottled(topic) ? 40 : Math.ceil((SECONDS + 4) * 22)); i++) backlog.push(topic);
  }
  await sendAll(q, backlog);
  let healthy = 0;
  let counting = false;
  const handler: MessageHandler = async (m) => {
    if (isThrottled(m.liteTopic)) {
      for (;;) {
        const d = pace({ rate: 1000 / 300, burst: 1 }, tats.get(m.liteTopic), Date.now());
        if (d.waitMs === 0) {
          tats.set(m.liteTopic, d.tat);
          break;
        }
        if (mode === 'suspend') return Consume.suspend(Math.max(50, d.waitMs));
        await sleep(systemClock, d.waitMs);
      }
    }
    await sleep(systemClock, serviceMs);
    if (counting && !isThrottled(m.liteTopic)) healthy++;
    return Consume.success;
  };
  const sub = q.subscribe(handler, { concurrency: 50 });
  await sleep(systemClock, 3_000); // first deliveries, connections
  counting = true;
  await sleep(systemClock, SECONDS * 1000);
  counting = false;
  const perSec = healthy / SECONDS;
  await sub.close();
  await q.close();
  return perSec;
}

/** 2. Send -> handler latency at `rate` messages per second over 50 LiteTopics. */
async function latency(q: LiteQueue, rate: number): Promise<{ p50: number; p99: number; mean: number; n: number }> {
  const samples: number[] = [];
  const sub = q.subscribe(async (m) => {
    samples.push(performance.now() - Number(m.body));
    return Consume.success;
  }, { concurrency: 64 });
  await sleep(systemClock, 1_000);
  const total = rate * SECONDS;
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(systemClock, wait);
    void q.send(`l${i % 50}`, String(performance.now()));
  }
  for (let i = 0; i < 300 && samples.length < total; i++) await sleep(systemClock, 100);
  await sub.close();
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 0.5), p99: percentile(samples, 0.99), mean: samples.reduce((a, b) => a + b, 0) / samples.length, n: samples.length };
}

/** 3. N fresh LiteTopics, one message each: time until every one is delivered, and the latency. */
async function manyTopics(n: number): Promise<{ deliveredAll: boolean; seconds: number; p50: number; p99: number }> {
  const q = await brokerQueue(`many-${n}`);
  const samples: number[] = [];
  const sub = q.subscribe(async (m) => {
    samples.push(performance.now() - Number(m.body));
    return Consume.success;
  }, { concurrency: 64 });
  const started = performance.now();
  await sendAll(q, Array.from({ length: n }, (_, i) => `m${i}`), () => String(performance.now()));
  for (let i = 0; i < 1200 && samples.length < n; i++) await sleep(systemClock, 100);
  const seconds = (performance.now() - started) / 1000;
  await sub.close();
  await q.close();
  samples.sort((a, b) => a - b);
  return { deliveredAll: samples.length >= n, seconds, p50: percentile(samples, 0.5), p99: percentile(samples, 0.99) };
}

try {
  const iso: Record<string, Record<string, number>> = {};
  for (const throttled of [5, 40]) {
    log(`isolation, ${throttled} throttled`);
    iso[throttled] = {
      unthrottled: await isolation('unthrottled', throttled),
      suspend: await isolation('suspend', throttled),
      sleep: await isolation('sleep', throttled),
    };
  }
  log('latency at 200 msg/s over 50 LiteTopics');
  const rocket = await latency(await brokerQueue('lat'), 200);
  const embedded = await latency(new EmbeddedLiteQueue({ clock: systemClock, maxInFlightPerTopic: 32 }), 200);
  const many: Record<string, Awaited<ReturnType<typeof manyTopics>>> = {};
  for (const n of TOPIC_COUNTS) {
    log(`${n} fresh LiteTopics`);
    many[n] = await manyTopics(n);
  }

  console.log(`RocketMQ ${mq.version}, one broker on loopback, 2 cores; ${SECONDS} s windows`);
  console.log('\n1. isolation: healthy LiteTopics, messages/s (50 LiteTopics, 50 handlers, 50 ms each; throttled: 1 per 300 ms)');
  console.log('throttled'.padEnd(11) + 'unthrottled'.padStart(13) + 'Suspend'.padStart(10) + 'sleep'.padStart(10) + '  Suspend/ref  sleep/ref');
  for (const [t, r] of Object.entries(iso)) {
    console.log(t.padEnd(11) + r.unthrottled!.toFixed(1).padStart(13) + r.suspend!.toFixed(1).padStart(10) + r.sleep!.toFixed(1).padStart(10) + `${((100 * r.suspend!) / r.unthrottled!).toFixed(0)}%`.padStart(13) + `${((100 * r.sleep!) / r.unthrottled!).toFixed(0)}%`.padStart(11));
  }
  console.log('\n2. send -> handler latency at 200 msg/s over 50 LiteTopics (ms)');
  console.log('engine'.padEnd(11) + 'p50'.padStart(9) + 'p99'.padStart(9) + 'mean'.padStart(9));
  for (const [name, r] of Object.entries({ rocketmq: rocket, embedded })) console.log(name.padEnd(11) + r.p50.toFixed(2).padStart(9) + r.p99.toFixed(2).padStart(9) + r.mean.toFixed(2).padStart(9));
  console.log('\n3. fresh LiteTopics, one message each');
  console.log('LiteTopics'.padEnd(11) + 'all delivered'.padStart(15) + 'seconds'.padStart(9) + 'p50 ms'.padStart(10) + 'p99 ms'.padStart(10));
  for (const [n, r] of Object.entries(many)) console.log(n.padEnd(11) + String(r.deliveredAll).padStart(15) + r.seconds.toFixed(1).padStart(9) + r.p50.toFixed(0).padStart(10) + r.p99.toFixed(0).padStart(10));
  console.log(JSON.stringify({ bench: 'queue', version: mq.version, seconds: SECONDS, isolation: iso, latency: { rocketmq: rocket, embedded }, liteTopics: many }));
} catch (error) {
  process.stderr.write(`queue bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  for (const q of open) await q.close().catch(() => undefined);
  await mq.stop();
  process.exit();
}
