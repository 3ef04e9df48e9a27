/**
 * The result channel on Redis, without busy polling. The dispatcher stores the
 * result (or appends a stream chunk), then publishes on the request's channel; the
 * edge subscribes first and reads the key after, so a result written between the
 * two is never missed. Works over TCP (ioredis, a shared subscriber connection)
 * and over Upstash REST, which has no blocking commands but does stream
 * SUBSCRIBE as server-sent events.
 */
import type { Redis as IoRedis } from 'ioredis';
import type { Redis as UpstashRedis } from '@upstash/redis';
import { sleep, type Clock } from '../clock/clock.js';
import { resultKey } from '../store/keys.js';
import { defineScript, safeEval, type EvalClient } from '../store/redis/safe-eval.js';
import { ioredisEvalClient } from '../store/redis/tcp.js';
import { upstashEvalClient } from '../store/redis/upstash.js';

/**
 * KEYS: result key. ARGV: result JSON, ttl s, channel, accepted at ('' = never replace).
 * Reply: 1 stored, 0 a final result was there already. A pending record
 * ({"status":"queued"}) is replaced, and so is a final one completed before `accepted at`.
 */
const SET_FINAL = defineScript(
  'set-final-result',
  `local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, old = pcall(cjson.decode, cur)
  local earlier = ARGV[4] ~= '' and ok and type(old) == 'table' and tonumber(old['completedAt'] or 0) < tonumber(ARGV[4])
  if not earlier and (not ok or type(old) ~= 'table' or old['status'] ~= 'queued') then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', tonumber(ARGV[2]))
redis.call('PUBLISH', ARGV[3], '1')
return 1
`,
);

async function setFinal(
  client: EvalClient,
  key: string,
  value: string,
  ttlSec: number,
  channel: string,
  acceptedAt?: number,
) {
  const args = [value, String(ttlSec), channel, acceptedAt === undefined ? '' : String(acceptedAt)];
  return Number(await safeEval(client, SET_FINAL, [key], args)) === 1;
}
import type { PendingRecord, ResultChannel, StoredResult } from './types.js';

/** The few Redis operations the channel needs; one adapter per client library. */
export interface ResultTransport {
  get(key: string): Promise<string | null>;
  setNx(key: string, value: string, ttlSec: number): Promise<void>;
  /** Stores a final result unless one is there already (a pending record is replaced), then publishes; true if stored. */
  setFinalAndPublish(
    key: string,
    value: string,
    ttlSec: number,
    channel: string,
    acceptedAt?: number,
  ): Promise<boolean>;
  appendAndPublish(listKey: string, value: string, ttlSec: number, channel: string): Promise<void>;
  range(listKey: string, from: number): Promise<string[]>;
  /** Resolves once the subscription is live; the returned function ends it. */
  subscribe(channel: string, onMessage: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const channelOf = (id: string) => `${resultKey(id)}:ch`;
const chunksOf = (id: string) => `${resultKey(id)}:chunks`;

export interface RedisResultsOptions {
  readonly transport: ResultTransport;
  readonly clock: Clock;
  readonly ttlSec?: number;
  /**
   * How long `track` keeps retrying while Redis refuses (default 5 s): long enough
   * for a restart or a failover, short enough that an accepted client is not held.
   */
  readonly trackRetryMs?: number;
}

const TRACK_RETRY_EVERY_MS = 100;

export function createRedisResults(options: RedisResultsOptions): ResultChannel {
  const { transport, clock } = options;
  const ttl = options.ttlSec ?? 3600;

  async function read(id: string): Promise<StoredResult | PendingRecord | undefined> {
    const raw = await transport.get(resultKey(id));
    return raw ? (JSON.parse(raw) as StoredResult | PendingRecord) : undefined;
  }
  const isFinal = (r: StoredResult | PendingRecord | undefined): r is StoredResult =>
    r !== undefined && r.status !== 'queued';

  /** A wake-up source: resolves on the next notification, the timeout, or abort. */
  async function listen(id: string) {
    let wake: (() => void) | undefined;
    let pending = false;
    const unsubscribe = await transport.subscribe(channelOf(id), () => {
      if (wake) wake();
      else pending = true;
    });
    return {
      next(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
        if (pending) {
          pending = false;
          return Promise.resolve(true);
        }
        return new Promise((resolve) => {
          const done = (v: boolean) => {
            wake = undefined;
            cancel();
            signal?.removeEventListener('abort', onAbort);
            resolve(v);
          };
          const onAbort = () => done(false);
          const cancel = clock.setTimer(timeoutMs, () => done(false));
          wake = () => done(true);
          signal?.addEventListener('abort', onAbort, { once: true });
          if (signal?.aborted) done(false);
        });
      },
      close: unsubscribe,
    };
  }

  return {
    async track(id, tenant) {
      const record = JSON.stringify({ id, tenant, status: 'queued' } satisfies PendingRecord);
      const giveUpAt = clock.now() + (options.trackRetryMs ?? 5_000);
      for (;;) {
        try {
          return await transport.setNx(resultKey(id), record, ttl);
        } catch (error) {
          if (clock.now() + TRACK_RETRY_EVERY_MS > giveUpAt) throw error;
          await sleep(clock, TRACK_RETRY_EVERY_MS);
        }
      }
    },
    complete: (result, acceptedAt) =>
      transport.setFinalAndPublish(resultKey(result.id), JSON.stringify(result), ttl, channelOf(result.id), acceptedAt),
    async appendChunk(id, data) {
      await transport.appendAndPublish(chunksOf(id), data, ttl, channelOf(id));
    },
    get: read,
    async wait(id, timeoutMs, signal) {
      const deadline = clock.now() + timeoutMs;
      const listener = await listen(id);
      try {
        for (;;) {
          const record = await read(id);
          if (isFinal(record)) return record;
          const left = deadline - clock.now();
          if (left <= 0 || signal?.aborted) return undefined;
          await listener.next(left, signal);
        }
      } finally {
        await listener.close();
      }
    },
    async *chunks(id, idleTimeoutMs, signal) {
      const listener = await listen(id);
      let next = 0;
      try {
        for (;;) {
          // Read the result before the chunks: a final result means every chunk is already in the list.
          const done = isFinal(await read(id));
          for (const chunk of await transport.range(chunksOf(id), next)) {
            next++;
            yield chunk;
          }
          if (done || signal?.aborted) return;
          if (!(await listener.next(idleTimeoutMs, signal))) return;
        }
      } finally {
        await listener.close();
      }
    },
    close: () => transport.close(),
  };
}

/** TCP transport: commands on `redis`, subscriptions multiplexed on one duplicate connection. */
export function ioredisTransport(redis: IoRedis): ResultTransport {
  let subscriber: IoRedis | undefined;
  const handlers = new Map<string, Set<() => void>>();
  function sub(): IoRedis {
    if (!subscriber) {
      // The command connection may be a fail-fast one (lazy, no offline queue); the
      // subscriber must connect on its own and queue SUBSCRIBE until it has.
      subscriber = redis.duplicate({ lazyConnect: false, enableOfflineQueue: true });
      subscriber.on('error', () => {});
      subscriber.on('message', (channel: string) => handlers.get(channel)?.forEach((h) => h()));
    }
    return subscriber;
  }
  return {
    get: (key) => redis.get(key),
    async setNx(key, value, ttlSec) {
      await redis.set(key, value, 'EX', ttlSec, 'NX');
    },
    setFinalAndPublish: (key, value, ttlSec, channel, at) =>
      setFinal(ioredisEvalClient(redis), key, value, ttlSec, channel, at),
    async appendAndPublish(listKey, value, ttlSec, channel) {
      await redis.multi().rpush(listKey, value).expire(listKey, ttlSec).publish(channel, '1').exec();
    },
    range: (listKey, from) => redis.lrange(listKey, from, -1),
    async subscribe(channel, onMessage) {
      let set = handlers.get(channel);
      if (!set) {
        handlers.set(channel, (set = new Set()));
        await sub().subscribe(channel);
      }
      set.add(onMessage);
      return async () => {
        set.delete(onMessage);
        if (set.size === 0 && handlers.get(channel) === set) {
          handlers.delete(channel);
          await subscriber?.unsubscribe(channel).catch(() => {});
        }
      };
    },
    async close() {
      subscriber?.disconnect();
    },
  };
}

/** Upstash REST transport: pipelines for the writes, SSE subscriptions for the wake-ups. */
export function upstashTransport(redis: UpstashRedis): ResultTransport {
  return {
    get: (key) =>
      redis
        .get<string>(key)
        .then((v) => (v === null || v === undefined ? null : typeof v === 'string' ? v : JSON.stringify(v))),
    async setNx(key, value, ttlSec) {
      await redis.set(key, value, { ex: ttlSec, nx: true });
    },
    setFinalAndPublish: (key, value, ttlSec, channel, at) =>
      setFinal(upstashEvalClient(redis), key, value, ttlSec, channel, at),
    async appendAndPublish(listKey, value, ttlSec, channel) {
      await redis.multi().rpush(listKey, value).expire(listKey, ttlSec).publish(channel, '1').exec();
    },
    range: (listKey, from) =>
      redis
        .lrange<string>(listKey, from, -1)
        .then((l) => l.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))),
    subscribe(channel, onMessage) {
      return new Promise((resolve, reject) => {
        const subscriber = redis.subscribe(channel);
        subscriber.on('message', () => onMessage());
        subscriber.on('error', (error) => reject(error));
        subscriber.on('subscribe', () => resolve(() => subscriber.unsubscribe().catch(() => {})));
      });
    },
    async close() {},
  };
}
