/**
 * Every script goes through `safeEval`: EVALSHA first, so steady-state calls
 * carry a 40-byte hash instead of the script, and EVAL once when Redis answers
 * NOSCRIPT (first call, or after a restart or SCRIPT FLUSH emptied its cache).
 * EVAL also loads the script, so the next EVALSHA hits.
 */
import { createHash } from 'node:crypto';

export interface Script {
  readonly name: string;
  readonly lua: string;
  readonly sha1: string;
}

export function defineScript(name: string, lua: string): Script {
  return { name, lua, sha1: createHash('sha1').update(lua, 'utf8').digest('hex') };
}

/** The two calls safeEval needs; the TCP and Upstash stores each adapt their client to it. */
export interface EvalClient {
  evalsha(sha1: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  eval(lua: string, keys: readonly string[], args: readonly string[]): Promise<unknown>;
}

export async function safeEval(
  client: EvalClient,
  script: Script,
  keys: readonly string[],
  args: readonly string[],
): Promise<unknown> {
  try {
    return await client.evalsha(script.sha1, keys, args);
  } catch (error) {
    if (String(error).includes('NOSCRIPT')) return client.eval(script.lua, keys, args);
    throw error;
  }
}

/**
 * Scripts reply with integers as integers and any other number as a string (a
 * Lua number reply is truncated to an integer), and the Upstash client turns
 * strings that look like numbers into numbers; callers read both through this.
 */
export function num(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(String(value));
  if (!Number.isFinite(n)) throw new Error(`expected a number in a script reply, got ${String(value)}`);
  return n;
}

export function replyArray(value: unknown, script: Script): unknown[] {
  if (!Array.isArray(value))
    throw new Error(`script ${script.name} returned ${JSON.stringify(value)}, expected an array`);
  return value;
}

/**
 * Lua helpers shared by every script. `now_ms` reads Redis TIME unless the
 * caller passed a time (stores built with an injected clock: simulations and
 * the conformance suite's virtual-time cases). `fmt` writes numbers so they
 * read back exactly (Lua's tostring keeps only 14 digits). `ret` keeps whole
 * numbers as integer replies, which cost less to encode and decode on every
 * path than strings, and sends the rest through `fmt`.
 */
export const LUA_PRELUDE = `
local function now_ms(arg)
  if arg ~= nil and arg ~= '' then return tonumber(arg) end
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function fmt(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then return string.format('%d', x) end
  return string.format('%.17g', x)
end
local function ret(x)
  if x == math.floor(x) and x > -1e15 and x < 1e15 then return x end
  return fmt(x)
end
`;
