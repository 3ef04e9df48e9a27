/**
 * A LiteTopic's return from a send-back: the Lua twin of lib/limits/send-back.ts. The
 * state is the pending return's time, which expires with it.
 */
import type { SendBackInput } from '../types.js';
import { defineScript, LUA_PRELUDE, num, safeEval, type EvalClient } from './safe-eval.js';

/**
 * KEYS: the LiteTopic's return. ARGV: now ('' = Redis TIME), ms, minMs, maxMs.
 * Reply: ms until the LiteTopic returns, and this message with it.
 */
export const SEND_BACK = defineScript(
  'send-back',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local minMs = tonumber(ARGV[3])
local cap = math.max(minMs, math.ceil(tonumber(ARGV[4])))
local pending = tonumber(redis.call('GET', KEYS[1]) or '')
local ms
if pending ~= nil and pending - now >= minMs then
  if pending - now <= cap then return ret(pending - now) end
  ms = cap
else
  ms = math.min(cap, math.max(minMs, math.ceil(tonumber(ARGV[2]))))
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
  const args = [now === undefined ? '' : String(now), String(input.ms), String(input.minMs), String(input.maxMs)];
  return num(await safeEval(client, SEND_BACK, [input.key], args));
}
