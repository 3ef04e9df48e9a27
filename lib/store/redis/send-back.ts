/**
 * A send-back's return: the Lua twin of lib/limits/send-back.ts. The state is the
 * LiteTopic's pending return and its tier's next place in the return schedule, each
 * expiring when it is past.
 */
import type { SendBackInput } from '../types.js';
import { defineScript, LUA_PRELUDE, num, safeEval, type EvalClient } from './safe-eval.js';

/**
 * KEYS: the LiteTopic's return, the tier's return schedule.
 * ARGV: now ('' = Redis TIME), ms, placeMs, minMs, maxMs, boundMs.
 * Reply: ms until this message returns.
 */
export const SEND_BACK = defineScript(
  'send-back',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local placeMs = tonumber(ARGV[3])
local minMs = tonumber(ARGV[4])
local boundMs = tonumber(ARGV[6])
local at = math.max(now + tonumber(ARGV[2]), tonumber(redis.call('GET', KEYS[2]) or '') or 0)
if at - now <= boundMs then
  local nextAt = at + placeMs
  redis.call('SET', KEYS[2], fmt(nextAt), 'PX', math.max(1, math.ceil(nextAt - now)))
end
local cap = math.max(minMs, math.ceil(math.min(tonumber(ARGV[5]), boundMs)))
local pending = tonumber(redis.call('GET', KEYS[1]) or '')
local ms
if pending ~= nil and pending - now >= minMs then
  if pending - now <= cap then return ret(pending - now) end
  ms = cap
else
  ms = math.min(cap, math.max(minMs, math.ceil(at - now)))
end
redis.call('SET', KEYS[1], fmt(now + ms), 'PX', math.max(1, math.ceil(ms)))
return ret(ms)
`,
);

export async function sendBackScript(
  client: EvalClient,
  input: SendBackInput,
  now: number | undefined,
): Promise<number> {
  const args = [now === undefined ? '' : String(now), input.ms, input.placeMs, input.minMs, input.maxMs, input.boundMs];
  return num(await safeEval(client, SEND_BACK, [input.key, input.scheduleKey], args.map(String)));
}
