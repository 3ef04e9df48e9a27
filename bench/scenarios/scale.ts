/**
 * scale: what idle LiteTopics cost on the embedded engine. For each count N, a fresh
 * engine gets N LiteTopics created by a first message and emptied by a consumer, so
 * they sit idle (as after a tenant's last request, until the idle TTL reclaims
 * them). Measured:
 *
 * - heap per idle LiteTopic: process.memoryUsage().heapUsed after a full GC, minus
 *   the same for the empty engine, over N (the engine's Topic record, its deque,
 *   its name, and its entries in the topic and idle maps);
 * - dispatcher CPU per delivered message: a small active set (50 LiteTopics, 40
 *   requests each) is then served by the real dispatcher (createDispatcher → the
 *   in-process simulated GPU) beside the N idle ones, and process.cpuUsage() over
 *   that phase is divided by the deliveries. The figure includes the simulated GPU
 *   and the virtual clock, which cost the same at every N: what matters is that it
 *   stays flat as N grows, because the engine's ready set holds only LiteTopics with
 *   work.
 *
 * A full GC needs --expose-gc; without it the scenario turns it on at run time
 * through V8 flags, and says so in its report.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { VirtualClock } from '../../lib/clock/virtual-clock.js';
import { createDispatcher } from '../../lib/dispatch/dispatcher.js';
import { liteTopicName } from '../../lib/queue/lite-topic-name.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import { Consume, type MessageHandler } from '../../lib/queue/types.js';
import { createEmbeddedResults } from '../../lib/results/embedded.js';
import { createEmbeddedStore } from '../../lib/store/embedded.js';
import { silentLogger } from '../../lib/telemetry/log.js';
import { createInProcessUpstream } from '../../lib/upstream/in-process.js';
import { createGpuSim } from '../../functions/gpu-sim/app.js';
import { round } from '../lib/recorder.js';
import { LAB_EPOCH, LAB_MODEL, worldPolicy } from '../lib/world.js';
import type { Scenario, ScenarioContext } from './types.js';

export interface ScaleParams {
  readonly counts: readonly number[];
  readonly activeTopics: number;
  readonly messagesPerActiveTopic: number;
}

export const scaleFull: ScaleParams = {
  counts: [0, 10_000, 100_000, 1_000_000],
  activeTopics: 50,
  messagesPerActiveTopic: 40,
};
export const scaleSmall: ScaleParams = { counts: [0, 10_000, 100_000], activeTopics: 50, messagesPerActiveTopic: 20 };

export interface ScalePoint {
  readonly idleLiteTopics: number;
  readonly heapBytes: number;
  readonly bytesPerIdleLiteTopic: number | null;
  readonly rssBytes: number;
  readonly createMs: number;
  readonly delivered: number;
  readonly completed: number;
  readonly cpuMicrosPerDelivery: number;
  readonly cpuMicrosPerCompleted: number;
}

type Gc = () => void;

function fullGc(): { gc: Gc; how: string } {
  const exposed = (globalThis as { gc?: Gc }).gc;
  if (exposed) return { gc: exposed, how: '--expose-gc' };
  setFlagsFromString('--expose-gc');
  return { gc: runInNewContext('gc') as Gc, how: 'V8 flag set at run time (node:v8 setFlagsFromString)' };
}

function heap(gc: Gc): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

export async function measureScale(idle: number, p: ScaleParams, gc: Gc): Promise<ScalePoint> {
  const clock = new VirtualClock(LAB_EPOCH);
  const queue = new EmbeddedLiteQueue({ clock, maxInFlightPerTopic: 8, idleTtlMs: 24 * 3_600_000 });
  let handler: MessageHandler = async () => Consume.success;
  const subscription = queue.subscribe((m) => handler(m), { concurrency: 256 });
  await clock.advance(1);

  const before = heap(gc);
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  for (let i = 0; i < idle; i++) {
    await queue.send(
      liteTopicName({ tier: 'offline', tenant: `idle-${i}`, account: `idle-${i}`, model: LAB_MODEL }),
      '',
    );
    // Consume in slices so the backlog never holds more than a slice of messages.
    if (i % 10_000 === 9_999) await clock.advance(1);
  }
  await clock.advance(1);
  const createMs = performance.now() - t0;
  if (queue.stats().queued !== 0 || queue.stats().liteTopics !== idle)
    throw new Error(`scale: expected ${idle} idle LiteTopics, engine has ${JSON.stringify(queue.stats())}`);
  const after = heap(gc);
  const rssAfter = process.memoryUsage().rss;

  // The active set, through the real dispatcher.
  const accounts: Record<string, { tenant: string; tier: string }> = {};
  for (let a = 0; a < p.activeTopics; a++) accounts[`active-${a}`] = { tenant: `active-${a}`, tier: 'realtime' };
  const policy = worldPolicy({ name: 'scale', trace: [], accounts, gpu: { slots: 64 } });
  const gpu = createGpuSim({
    clock,
    models: [LAB_MODEL],
    slots: 64,
    queueLimit: 64,
    baseTokenMs: 5,
    minOutputTokens: 16,
    maxOutputTokens: 16,
    decodeStepTokens: 16,
  });
  const store = createEmbeddedStore(clock);
  const results = createEmbeddedResults({ clock });
  const upstream = createInProcessUpstream({ fetch: gpu.app.fetch, clock });
  let completed = 0;
  let leases = 0;
  handler = createDispatcher({
    clock,
    store,
    results,
    upstream,
    policy: () => policy,
    log: silentLogger,
    newId: () => `lease-${++leases}`,
    onEvent: (e) => {
      if (e.type === 'completed') completed++;
    },
  });
  const deliveredBefore = queue.stats().delivered;
  const cpu0 = process.cpuUsage();
  let n = 0;
  for (let m = 0; m < p.messagesPerActiveTopic; m++) {
    for (let a = 0; a < p.activeTopics; a++) {
      const tenant = `active-${a}`;
      const liteTopic = liteTopicName({ tier: 'realtime', tenant, account: tenant, model: LAB_MODEL });
      const now = clock.now();
      const envelope = {
        id: `scale-${++n}`,
        account: tenant,
        tenant,
        tier: 'realtime',
        model: LAB_MODEL,
        liteTopic,
        operation: 'chat.completions',
        body: { model: LAB_MODEL, messages: [{ role: 'user', content: `hi ${n}` }], max_tokens: 16 },
        mode: 'async',
        enqueuedAt: now,
        deadline: now + 600_000,
        tokenEstimate: 20,
        charged: [],
      };
      await queue.send(liteTopic, JSON.stringify(envelope));
    }
  }
  const total = p.activeTopics * p.messagesPerActiveTopic;
  for (let guard = 0; completed < total && guard < 10_000; guard++) {
    await clock.advance(100);
  }
  const cpu = process.cpuUsage(cpu0);
  const delivered = queue.stats().delivered - deliveredBefore;
  await subscription.close();
  await queue.close();
  gpu.close();
  if (completed < total) throw new Error(`scale: only ${completed} of ${total} active requests completed`);
  const micros = cpu.user + cpu.system;
  return {
    idleLiteTopics: idle,
    heapBytes: after - before,
    bytesPerIdleLiteTopic: idle > 0 ? round((after - before) / idle, 1) : null,
    rssBytes: rssAfter - rssBefore,
    createMs: Math.round(createMs),
    delivered,
    completed,
    cpuMicrosPerDelivery: round(micros / delivered, 1),
    cpuMicrosPerCompleted: round(micros / completed, 1),
  };
}

export const scale: Scenario = {
  name: 'scale',
  description: 'memory per idle LiteTopic and dispatcher CPU per delivered message at 10k / 100k / 1M idle LiteTopics',
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? scaleFull : scaleSmall;
    const counts = ctx.flags.counts ? ctx.flags.counts.split(',').map(Number) : p.counts;
    const { gc, how } = fullGc();
    // A first pass warms the JIT up, so the first measured point is not charged for compiling.
    await measureScale(0, p, gc);
    const points: ScalePoint[] = [];
    for (const idle of counts) {
      ctx.log(`scale: ${idle} idle LiteTopics`);
      points.push(await measureScale(idle, p, gc));
    }
    const largest = points.at(-1)!;
    const reference = points.find((x) => x.idleLiteTopics === 0) ?? points[0]!;
    const headline = {
      largestIdleLiteTopics: largest.idleLiteTopics,
      bytesPerIdleLiteTopicAtLargest: largest.bytesPerIdleLiteTopic,
      cpuMicrosPerDeliveryAtLargest: largest.cpuMicrosPerDelivery,
      cpuMicrosPerDeliveryWithoutIdle: reference.cpuMicrosPerDelivery,
      /** CPU per delivery at the largest count over the same with no idle LiteTopics. */
      cpuGrowth: round(largest.cpuMicrosPerDelivery / reference.cpuMicrosPerDelivery, 2),
    };
    return {
      scenario: 'scale',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        ...p,
        counts,
        gc: how,
        engine: 'EmbeddedLiteQueue (maxInFlightPerTopic 8, 256 workers)',
        note: 'memory and CPU are measurements of this process: they vary a little between runs',
      },
      headline,
      tables: [
        {
          title: 'idle LiteTopics: memory, and dispatcher CPU for the same active work',
          columns: [
            'idle LiteTopics',
            'heap Δ',
            'bytes / idle LiteTopic',
            'RSS Δ',
            'create+drain',
            'deliveries',
            'CPU µs / delivery',
            'CPU µs / completed',
          ],
          rows: points.map((x) => [
            x.idleLiteTopics,
            `${(x.heapBytes / 1048576).toFixed(1)} MiB`,
            x.bytesPerIdleLiteTopic ?? '-',
            `${(x.rssBytes / 1048576).toFixed(1)} MiB`,
            `${x.createMs} ms`,
            x.delivered,
            x.cpuMicrosPerDelivery,
            x.cpuMicrosPerCompleted,
          ]),
        },
      ],
      details: { points },
    };
  },
};
