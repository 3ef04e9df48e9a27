/**
 * The RateStore over Redis TCP, for containers and local runs.
 *
 * ioredis: it pipelines every concurrent call over one connection (one
 * admission stays one round trip and many share a syscall), reconnects by
 * itself, and can be told to fail fast instead of queueing while Redis is
 * down — the guarded store needs a prompt error, not a stall. RESP2 is pinned
 * because script replies are the same either way and RESP2 is what every
 * Redis and the Upstash proxy speak.
 */
import { Redis } from 'ioredis';
import type { Clock } from '../../clock/clock.js';
import type { RateStore } from '../types.js';
import type { EvalClient } from './safe-eval.js';
import { createRedisStore } from './store.js';
import { createSubscriber } from './subscriber.js';

export function ioredisEvalClient(redis: Redis): EvalClient {
  return {
    evalsha: (sha1, keys, args) => redis.evalsha(sha1, keys.length, ...keys, ...args),
    eval: (lua, keys, args) => redis.eval(lua, keys.length, ...keys, ...args),
  };
}

export interface TcpStoreOptions {
  /** A client the caller owns (close() leaves it open)... */
  readonly redis?: Redis;
  /** ...or a redis:// URL for a connection the store owns. */
  readonly url?: string;
  readonly clock?: Clock;
  /** Per-command timeout for an owned connection; a slow Redis then errors instead of stalling. */
  readonly commandTimeoutMs?: number;
}

/** A fail-fast connection: no offline queue, no resending, quick reconnects. */
export async function connectRedis(url: string, commandTimeoutMs?: number): Promise<Redis> {
  const redis = new Redis(url, {
    protocol: 2,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(attempt * 50, 500),
    commandTimeout: commandTimeoutMs,
  });
  // Without a listener ioredis reports every failed reconnect as an unhandled error.
  redis.on('error', () => {});
  await redis.connect();
  return redis;
}

export async function createTcpStore(options: TcpStoreOptions): Promise<RateStore> {
  const owned = options.redis === undefined;
  if (owned && !options.url) throw new Error('createTcpStore needs a client or a url');
  const redis = options.redis ?? (await connectRedis(options.url!, options.commandTimeoutMs));
  const subscriber = createSubscriber(redis);
  return createRedisStore(ioredisEvalClient(redis), {
    clock: options.clock,
    subscribe: subscriber.subscribe,
    onClose: async () => {
      subscriber.close();
      if (owned) redis.disconnect();
    },
  });
}
