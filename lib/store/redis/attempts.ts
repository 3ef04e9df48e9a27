/**
 * Attempt records in Redis: the Lua twin of lib/store/attempts.ts. One hash per
 * request id {owner, until, calls, failures} with a TTL, so records of finished
 * requests go by themselves.
 */
import type { Clock } from '../../clock/clock.js';
import type { AttemptStore, Claim } from '../attempts.js';
import { attemptKey } from '../keys.js';
import { defineScript, LUA_PRELUDE, num, replyArray, safeEval, type EvalClient } from './safe-eval.js';

/**
 * KEYS: the record. ARGV: now ('' = Redis TIME), owner, lease ms, ttl ms.
 * Reply: state (1 granted, 0 busy, -1 lost), retryAfterMs, calls, failures.
 */
export const CLAIM_ATTEMPT = defineScript(
  'claim-attempt',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local h = redis.call('HMGET', KEYS[1], 'owner', 'until', 'calls', 'failures')
local calls = tonumber(h[3] or '0')
local failures = tonumber(h[4] or '0')
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
if h[1] then
  local untilMs = tonumber(h[2])
  if untilMs > now then return {0, ret(untilMs - now), calls, failures} end
  failures = failures + 1
  redis.call('HDEL', KEYS[1], 'owner', 'until')
  redis.call('HSET', KEYS[1], 'calls', calls, 'failures', failures)
  return {-1, 0, calls, failures}
end
calls = calls + 1
-- On a first claim the PEXPIRE above found no key: set the TTL once HSET made it.
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'until', fmt(now + tonumber(ARGV[3])), 'calls', calls, 'failures', failures)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
return {1, 0, calls, failures}
`,
);

/** KEYS: the record. ARGV: owner, failed (1/0), ttl ms. Reply: failures. */
export const END_ATTEMPT = defineScript(
  'end-attempt',
  `local h = redis.call('HMGET', KEYS[1], 'owner', 'failures')
local failures = tonumber(h[2] or '0')
if h[1] == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'owner', 'until')
  if ARGV[2] == '1' then failures = failures + 1 end
  redis.call('HSET', KEYS[1], 'failures', failures)
end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3])) end
return failures
`,
);

export interface RedisAttemptsOptions {
  /** Replaces Redis TIME; leave unset in production. */
  readonly clock?: Clock;
  /** Called by close(): quits the connection if the caller handed it over. */
  readonly onClose?: () => Promise<void>;
}

export function createRedisAttempts(client: EvalClient, options: RedisAttemptsOptions = {}): AttemptStore {
  return {
    async claim(id, owner, leaseMs, ttlMs): Promise<Claim> {
      const now = options.clock?.now();
      const args = [now === undefined ? '' : String(now), owner, String(leaseMs), String(ttlMs)];
      const reply = replyArray(await safeEval(client, CLAIM_ATTEMPT, [attemptKey(id)], args), CLAIM_ATTEMPT);
      const [state, retryAfterMs, calls, failures] = reply.map(num) as [number, number, number, number];
      if (state === 1) return { state: 'granted', calls, failures };
      if (state === 0) return { state: 'busy', retryAfterMs, calls, failures };
      return { state: 'lost', calls, failures };
    },
    async end(id, owner, failed, ttlMs) {
      return num(await safeEval(client, END_ATTEMPT, [attemptKey(id)], [owner, failed ? '1' : '0', String(ttlMs)]));
    },
    close: async () => {
      await options.onClose?.();
    },
  };
}
