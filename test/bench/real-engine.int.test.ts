import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { compare } from '../../bench/lib/compare.js';
import { createRealEngine } from '../../bench/lib/real-engine.js';
import { createRng } from '../../bench/lib/rng.js';
import { burst, merge, poisson } from '../../bench/lib/trace.js';
import { LAB_MODEL, type World } from '../../bench/lib/world.js';
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { rawCommand, startRedisServer, type RedisServerHandle } from '../../scripts/redis/server.ts';
import { controlClient } from '../../scripts/rocketmq/control.ts';

// The lab's real engine: Sluice over redis-server and RocketMQ on the wall clock,
// side by side with the baseline. A 20-second trace: steady realtime traffic and a
// batch burst five times the GPU pool.
const mq = inject('rocketmq');
let redis: RedisServerHandle;

beforeAll(async () => {
  // The engine flushes its Redis before each run: it gets a server of its own.
  redis = await startRedisServer({ log: () => {} });
});
afterAll(async () => {
  await redis?.close();
});

function world(): World {
  const rng = createRng(5);
  const rt = {
    rng: rng.fork('rt'),
    accounts: ['app-1', 'app-2'],
    model: LAB_MODEL,
    tokens: (r: ReturnType<typeof createRng>) => r.int(16, 48),
  };
  const job = { rng: rng.fork('job'), accounts: ['job-1'], model: LAB_MODEL, tokens: () => 48 };
  return {
    name: 'real-engine-smoke',
    trace: merge(poisson(rt, 2, 0, 20_000), burst(job, 20, 4_000, 1_000)),
    accounts: {
      'app-1': { tenant: 'acme', tier: 'realtime' },
      'app-2': { tenant: 'acme', tier: 'realtime' },
      'job-1': { tenant: 'batchco', tier: 'batch' },
    },
    tiers: defaultTiers,
    defaults: defaultLimits,
    gpu: { slots: 4, baseTokenMs: 10, queueLimit: 4, maxQueueWaitMs: 2_000 },
    bucketMs: 2_000,
    drainMs: 90_000,
  };
}

describe('lab --engine real', () => {
  it(
    'replays a trace through Sluice on redis-server + RocketMQ and through the baseline, on the wall clock',
    { timeout: 240_000 },
    async () => {
      const control = controlClient(mq.controlUrl);
      const engine = createRealEngine(
        {
          redis: { url: redis.url, flush: async () => void (await rawCommand(redis.port, ['FLUSHALL'])) },
          rocketmq: {
            endpoints: mq.endpoints,
            createLiteTopic: (t) => control.createLiteTopic(t),
            createWildcardGroup: (g, t, o) => control.createWildcardGroup(g, t, o),
          },
        },
        { leadMs: 3_000 },
      );
      const w = world();
      const wallStart = Date.now();
      const c = await compare(w, { engine });
      await engine.close();

      expect(c.engine.name).toBe('real');
      expect(c.engine.parts).toMatchObject({ store: 'redis-tcp', results: 'redis-tcp' });
      expect(c.engine.parts.queue).toMatch(/^rocketmq:/);
      // Real time: the run lasts at least as long as its trace.
      expect(Date.now() - wallStart).toBeGreaterThanOrEqual(w.trace.at(-1)!.t);
      for (const r of [c.sluice, c.baselines.shallow, c.baselines.fcfs, c.baselines.priority]) {
        expect(r.total.sent).toBe(w.trace.length);
        expect(r.unanswered).toBe(0);
      }
      // The burst outruns the pool: the shallow baseline's GPU refuses some of it, Sluice queues it all.
      expect(c.baselines.shallow.gpu.refused429 + c.baselines.shallow.gpu.refused503).toBeGreaterThan(0);
      expect(c.sluice.gpu.refused429 + c.sluice.gpu.refused503).toBe(0);
      expect(c.sluice.total.ok).toBe(w.trace.length);
      expect(c.sluice.gpu.peakBusy).toBeLessThanOrEqual(4);
      // One LiteTopic (job-1's) runs several requests at once on a FIFO group: it is sharded
      // (as many shards as GPU slots). Unsharded, the burst would run one at a time, beside at
      // most one realtime request; the batch tier may take 3 of the 4 slots here.
      console.log(
        `real engine: sluice peak busy ${c.sluice.gpu.peakBusy}, wait p99 ${c.sluice.total.waitMs.p99} ms, parts ${JSON.stringify(c.engine.parts)}`,
      );
      expect(c.world.inFlightPerTopic).toBe(4);
      expect(c.engine.parts.queue).toMatch(/4 shards per LiteTopic/);
      expect(c.sluice.gpu.peakBusy).toBeGreaterThanOrEqual(3);
    },
  );
});
