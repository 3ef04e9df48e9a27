/**
 * The lab's real engine: Sluice on the wall clock over redis-server (the TCP store
 * behind the guarded store, the Redis result channel) and RocketMQ 5.5 LiteTopics,
 * wired by the same `createParts` the deployed edge and dispatcher use. A run takes
 * as long as its trace, so it plays the scenarios' scaled-down worlds.
 *
 * Each Sluice run gets a flushed Redis and a LITE parent topic and wildcard group of
 * its own, so nothing an earlier run left behind (windows, reservoirs, messages)
 * leaks into the next.
 */
import { setTimeout as wait } from 'node:timers/promises';
import { silentLogger } from '../../lib/telemetry/log.js';
import { readConfig } from '../../functions/runtime/config.js';
import { createParts } from '../../functions/runtime/parts.js';
import { systemClock } from '../../functions/runtime/system-clock.js';
import type { WildcardGroupOptions } from '../../scripts/rocketmq/admin.ts';
import { createReceiveProbe } from '../../lib/queue/rocketmq/receive-probe.js';
import type { LabEngine, Timeline } from './engine.js';
import { inFlightPerTopicOf } from './world.js';

/** Messages of one LiteTopic the broker hands a consumer at once (rocketmq-client-nodejs 1.0.8's receive batch). */
const RECEIVE_BATCH = 32;

export interface RealServices {
  /** A redis-server of the lab's own: it is flushed before every Sluice run. */
  readonly redis: { readonly url: string; flush(): Promise<void> };
  /** A RocketMQ 5.5 proxy and a way to create topics and groups on its broker. */
  readonly rocketmq: {
    readonly endpoints: string;
    createLiteTopic(topic: string): Promise<void>;
    createWildcardGroup(group: string, parentTopic: string, opts?: Partial<WildcardGroupOptions>): Promise<void>;
  };
  /** Options of each run's consumer group (default: the broker scripts' default group). */
  readonly group?: Partial<WildcardGroupOptions>;
  /** Stops what the engine started itself. */
  close?(): Promise<void>;
}

export interface RealEngineOptions {
  /** Time between creating a timeline and its trace starting: Sluice's parts connect meanwhile. */
  readonly leadMs?: number;
  readonly progressEveryMs?: number;
  /** Where each run's receive figures go when it closes (what the consumer received and how long it waited). */
  readonly log?: (line: string) => void;
}

export function createRealEngine(services: RealServices, options: RealEngineOptions = {}): LabEngine {
  let runs = 0;
  const tag = Date.now().toString(36);
  return {
    name: 'real',
    timeline(start = systemClock.now() + (options.leadMs ?? 5_000)): Timeline {
      return {
        clock: systemClock,
        start,
        until: (at) => wait(Math.max(0, at - systemClock.now())),
        progressEveryMs: options.progressEveryMs ?? 15_000,
      };
    },
    async sluice(world, policy, timeline, { settleDeadLetter }) {
      const run = `lab-${tag}-${++runs}`;
      const group = { ...services.group };
      await services.redis.flush();
      await services.rocketmq.createLiteTopic(run);
      await services.rocketmq.createWildcardGroup(`${run}-dispatchers`, run, group);
      // As many of a tenant's requests at the GPU at once as the embedded engine allows (world.inFlightPerTopic).
      const shards = Math.min(64, inFlightPerTopicOf(world));
      const config = readConfig({
        SLUICE_ROCKETMQ_LITETOPIC_SHARDS: String(shards),
        SLUICE_REDIS_URL: services.redis.url,
        SLUICE_ROCKETMQ_ENDPOINTS: services.rocketmq.endpoints,
        SLUICE_ROCKETMQ_TOPIC: run,
        SLUICE_ROCKETMQ_GROUP: `${run}-dispatchers`,
        SLUICE_POLICY_JSON: JSON.stringify(policy),
      });
      // Broker waits by tier: a LiteTopic's name starts with its encoded tier.
      const probe = createReceiveProbe((liteTopic) => liteTopic.split('-')[0] ?? '');
      const parts = await createParts(config, timeline.clock, silentLogger, {
        role: 'dispatcher',
        settleDeadLetter,
        rocketmqProbe: probe,
      });
      // More dispatchers: each with its own parts (Redis connections, RocketMQ consumer client), as processes have.
      const more: Awaited<ReturnType<typeof createParts>>[] = [];
      for (let i = 1; i < (world.dispatchers ?? 1); i++) {
        more.push(
          await createParts(config, timeline.clock, silentLogger, {
            role: 'dispatcher',
            settleDeadLetter,
            rocketmqProbe: probe,
          }),
        );
      }
      const dispatchers = more.length ? [parts, ...more] : undefined;
      // Beside the lab's progress lines: whether the consumer keeps receiving, and how much it holds.
      const every = options.progressEveryMs ?? 15_000;
      const ticker = options.log
        ? setInterval(() => {
            const s = probe.summary();
            options.log!(
              `real engine: receives ${s.receives} (${s.emptyReceives} empty), messages ${s.messages} (${s.afterSuspend} back from a Suspend, ${s.suspendedUnseen} Suspends the client sent on its own: ${s.earlyAfterSuspend} early, ${s.lateAfterSuspendMs.count} late by p50 ${s.lateAfterSuspendMs.p50} ms / p99 ${s.lateAfterSuspendMs.p99} ms, ${s.lateBehindAfterSuspendMs.count} held up behind one of their LiteTopic in hand, by p99 ${s.lateBehindAfterSuspendMs.p99} ms; ${s.afterSettled} already acked, ${s.whileInHand} while in hand), unsettled ${s.unsettledNow} (peak ${s.peakUnsettled}), queued for a handler peak ${s.peakQueuedForHandler}, nudges ${s.nudges}`,
            );
          }, every)
        : undefined;
      return {
        store: parts.store,
        queue: parts.queue,
        results: parts.results,
        attempts: parts.attempts,
        describe: {
          ...parts.describe,
          group: group.orderly === false ? 'concurrent' : 'FIFO per LiteTopic',
          ...(dispatchers
            ? { dispatchers: `${dispatchers.length} (own consumer client and Redis connections each)` }
            : {}),
        },
        // A FIFO group runs one message of a physical LiteTopic at a time; a non-orderly one a received batch at once.
        inFlightPerTopic: shards * (group.orderly === false ? Math.min(RECEIVE_BATCH, world.workers ?? 64) : 1),
        ...(dispatchers ? { dispatchers } : {}),
        close: async () => {
          clearInterval(ticker);
          await Promise.all(more.map((p) => p.close()));
          await parts.close();
          options.log?.(`real engine: ${run} receive figures ${JSON.stringify(probe.summary())}`);
        },
      };
    },
    async pair(a, b) {
      // Side by side on the wall clock: both systems see every request at the same instant.
      return Promise.all([a(), b()]);
    },
    async close() {
      await services.close?.();
    },
  };
}

/**
 * Starts a redis-server and RocketMQ 5.5 (namesrv, broker, cluster-mode proxy) for
 * the lab, installing what is missing, and an engine that stops them on close.
 */
export async function startRealEngine(
  log: (line: string) => void,
  group?: Partial<WildcardGroupOptions>,
): Promise<LabEngine> {
  const { startRedisServer, rawCommand } = await import('../../scripts/redis/server.ts');
  const { startRocketMQ } = await import('../../scripts/rocketmq/index.ts');
  log('real engine: starting redis-server and RocketMQ 5.5 (first run downloads the jars from Maven Central)');
  const redis = await startRedisServer({ log: (line) => log(`[redis] ${line}`) });
  let mq;
  try {
    mq = await startRocketMQ({ log: (line) => log(`[rocketmq] ${line}`) });
  } catch (err) {
    await redis.close();
    throw err;
  }
  const rocketmq = mq;
  return createRealEngine(
    {
      redis: {
        url: redis.url,
        flush: async () => {
          await rawCommand(redis.port, ['FLUSHALL']);
        },
      },
      rocketmq: {
        endpoints: rocketmq.endpoints,
        createLiteTopic: (topic) => rocketmq.createLiteTopic(topic),
        createWildcardGroup: (g, topic, opts) => rocketmq.createWildcardGroup(g, topic, opts),
      },
      ...(group ? { group } : {}),
      async close() {
        log('real engine: stopping RocketMQ and redis-server');
        await rocketmq.stop();
        await redis.close();
      },
    },
    { log },
  );
}
