/**
 * The RateStore over Upstash's REST API, for the edge: @upstash/redis, whose
 * auto-pipelining folds concurrent admissions into one HTTP request.
 */
import type { Redis } from '@upstash/redis';
import type { Clock } from '../../clock/clock.js';
import type { RateStore } from '../types.js';
import type { EvalClient } from './safe-eval.js';
import { createRedisStore } from './store.js';

export function upstashEvalClient(redis: Redis): EvalClient {
  return {
    evalsha: (sha1, keys, args) => redis.evalsha(sha1, [...keys], [...args]),
    eval: (lua, keys, args) => redis.eval(lua, [...keys], [...args]),
  };
}

export interface UpstashStoreOptions {
  readonly redis: Redis;
  readonly clock?: Clock;
}

export function createUpstashStore(options: UpstashStoreOptions): RateStore {
  return createRedisStore(upstashEvalClient(options.redis), { clock: options.clock });
}
