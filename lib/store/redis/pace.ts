/**
 * GCRA pacing: the Lua twin of lib/limits/gcra.ts. The state is one number, the
 * theoretical arrival time, written with all 17 digits so that fractional
 * emission intervals (rate 3/s = 333.33… ms) advance exactly as in TypeScript.
 */
import { paceStateTtlMs } from '../../limits/gcra.js';
import type { PaceInput, PaceOutcome } from '../types.js';
import { GC_SLACK_MS } from './admit.js';
import { defineScript, LUA_PRELUDE, num, replyArray, safeEval, type EvalClient } from './safe-eval.js';

/**
 * KEYS: the TAT. ARGV: now ('' = Redis TIME), rate, burst, ttl, reserve-up-to ms ('' = never).
 * Reply: {wait, reserved}: wait 0 when released now (and recorded); a wait within
 * reserve-up-to books that slot (recorded, reserved = 1); a longer one records nothing.
 */
export const PACE = defineScript(
  'pace',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local interval = 1000 / rate
local tolerance = (math.max(1, burst) - 1) * interval
local tat = tonumber(redis.call('GET', KEYS[1]) or '')
local base = now
if tat ~= nil and tat > now then base = tat end
local allowAt = base - tolerance
local reserveUpTo = tonumber(ARGV[5])
if now < allowAt then
  local wait = math.ceil(allowAt - now)
  if reserveUpTo == nil or wait > reserveUpTo then return {wait, 0} end
  redis.call('SET', KEYS[1], fmt(base + interval), 'PX', ARGV[4])
  return {wait, 1}
end
redis.call('SET', KEYS[1], fmt(base + interval), 'PX', ARGV[4])
return {0, 0}
`,
);

export async function paceScript(client: EvalClient, input: PaceInput, now: number | undefined): Promise<PaceOutcome> {
  // A TAT at or before now means "idle"; beyond paceStateTtlMs it always is.
  const ttl = paceStateTtlMs(input, input.reserveUpToMs) + GC_SLACK_MS;
  const args = [
    now === undefined ? '' : String(now),
    String(input.rate),
    String(input.burst),
    String(ttl),
    input.reserveUpToMs === undefined ? '' : String(input.reserveUpToMs),
  ];
  const [wait, reserved] = replyArray(await safeEval(client, PACE, [input.key], args), PACE).map(num) as [
    number,
    number,
  ];
  return { waitMs: wait, reserved: reserved === 1 };
}
