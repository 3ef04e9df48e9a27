/**
 * The Lua twins of lib/store/aggregate.ts: bounded counter hashes, the member
 * registry and bounded hashes of lines. One script call per operation, as for the limits.
 */
import type { AggregateOps, CounterAdd, LineAppend, Member } from '../aggregate.js';
import { OVERFLOW_FIELD, splitLines } from '../aggregate.js';
import { defineScript, LUA_PRELUDE, num, replyArray, safeEval, type EvalClient } from './safe-eval.js';

/** hasPlace of lib/store/aggregate.ts: the field exists, or the hash has room beside the overflow's place. */
const HAS_PLACE = `local function has_place(key, field, maxFields)
  return redis.call('HEXISTS', key, field) == 1 or redis.call('HLEN', key) < maxFields - 1
end`;

/**
 * KEYS: the counter hashes.
 * ARGV: overflow field, then per key: ttl ms, max fields, pair count, then field/delta pairs.
 * Reply: 0.
 */
export const ADD_COUNTS = defineScript(
  'add-counts',
  `${HAS_PLACE}
local overflow = ARGV[1]
local a = 2
for k = 1, #KEYS do
  local ttl = tonumber(ARGV[a])
  local maxFields = math.max(1, tonumber(ARGV[a + 1]))
  local n = tonumber(ARGV[a + 2])
  a = a + 3
  for i = 1, n do
    local field = ARGV[a]
    local delta = tonumber(ARGV[a + 1])
    a = a + 2
    if delta ~= 0 then
      if not has_place(KEYS[k], field, maxFields) then field = overflow end
      local next = redis.call('HINCRBY', KEYS[k], field, delta)
      if next <= 0 then redis.call('HDEL', KEYS[k], field) end
    end
  end
  if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], ttl) end
end
return 0
`,
);

/** KEYS: hashes. Reply: per key, a flat field/value array. */
export const READ_COUNTS = defineScript(
  'read-counts',
  `local out = {}
for k = 1, #KEYS do out[k] = redis.call('HGETALL', KEYS[k]) end
return out
`,
);

/**
 * KEYS: member values (hash), member last-seen (zset).
 * ARGV: now ('' = Redis TIME), id, value, ttl ms, max members.
 */
export const PUT_MEMBER = defineScript(
  'put-member',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local ttl = tonumber(ARGV[4])
local silent = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', fmt(now - ttl))
if #silent > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', fmt(now - ttl))
  redis.call('HDEL', KEYS[1], unpack(silent))
end
redis.call('ZADD', KEYS[2], fmt(now), ARGV[2])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
local extra = redis.call('ZCARD', KEYS[2]) - math.max(1, tonumber(ARGV[5]))
if extra > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, extra - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, extra - 1)
  redis.call('HDEL', KEYS[1], unpack(oldest))
end
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
return 0
`,
);

/** KEYS: member values, member last-seen. ARGV: now, ttl ms. Reply: id/value pairs, most recent first. */
export const READ_MEMBERS = defineScript(
  'read-members',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local ids = redis.call('ZREVRANGEBYSCORE', KEYS[2], '+inf', '(' .. fmt(now - tonumber(ARGV[2])))
local out = {}
for _, id in ipairs(ids) do
  local v = redis.call('HGET', KEYS[1], id)
  if v then out[#out + 1] = id; out[#out + 1] = v end
end
return out
`,
);

/**
 * KEYS: the hashes of lines.
 * ARGV: per key: ttl ms, max fields, max bytes per value, pair count, then field/line pairs.
 * A full value keeps its first line and drops the next ones, oldest first, to take a new line.
 * Reply: 0.
 */
export const APPEND_LINES = defineScript(
  'append-lines',
  `${HAS_PLACE}
local a = 1
for k = 1, #KEYS do
  local ttl = tonumber(ARGV[a])
  local maxFields = math.max(1, tonumber(ARGV[a + 1]))
  local maxBytes = tonumber(ARGV[a + 2])
  local n = tonumber(ARGV[a + 3])
  a = a + 4
  for i = 1, n do
    local field = ARGV[a]
    local line = ARGV[a + 1]
    a = a + 2
    if #line > 0 and not string.find(line, '\\n', 1, true) then
      local old = redis.call('HGET', KEYS[k], field)
      if old then
        local first, rest = string.match(old, '^([^\\n]*)\\n?(.*)$')
        local tail = line
        if rest ~= '' then tail = rest .. '\\n' .. line end
        while #first + 1 + #tail > maxBytes do
          local cut = string.find(tail, '\\n', 1, true)
          if not cut then break end
          tail = string.sub(tail, cut + 1)
        end
        if #first + 1 + #tail <= maxBytes then redis.call('HSET', KEYS[k], field, first .. '\\n' .. tail) end
      elseif #line <= maxBytes and has_place(KEYS[k], field, maxFields) then
        redis.call('HSET', KEYS[k], field, line)
      end
    end
  end
  if redis.call('EXISTS', KEYS[k]) == 1 then redis.call('PEXPIRE', KEYS[k], ttl) end
end
return 0
`,
);

/** KEYS: hashes of lines. ARGV: the field. Reply: per key, the field's value ('' when missing). */
export const READ_LINES = defineScript(
  'read-lines',
  `local out = {}
for k = 1, #KEYS do out[k] = redis.call('HGET', KEYS[k], ARGV[1]) or '' end
return out
`,
);

/** The member registry's second key; same hash tag as the first. */
export function memberSeenKey(index: string): string {
  return `${index}:seen`;
}

export function redisAggregateOps(client: EvalClient, now: () => number | undefined): AggregateOps {
  const at = () => {
    const t = now();
    return t === undefined ? '' : String(t);
  };
  return {
    async addCounts(adds: readonly CounterAdd[]) {
      const live = adds.filter((a) => a.counts.length > 0);
      if (live.length === 0) return;
      const args = [OVERFLOW_FIELD];
      for (const add of live) {
        args.push(String(Math.max(1, Math.ceil(add.ttlMs))), String(add.maxFields), String(add.counts.length));
        for (const [field, delta] of add.counts)
          args.push(field, String(Number.isFinite(delta) ? Math.trunc(delta) : 0));
      }
      await safeEval(
        client,
        ADD_COUNTS,
        live.map((a) => a.key),
        args,
      );
    },
    async readCounts(keys) {
      if (keys.length === 0) return [];
      const reply = replyArray(await safeEval(client, READ_COUNTS, keys, []), READ_COUNTS);
      return keys.map((_, i) => {
        const flat = Array.isArray(reply[i]) ? (reply[i] as unknown[]) : [];
        const hash = new Map<string, number>();
        for (let j = 0; j + 1 < flat.length; j += 2) hash.set(String(flat[j]), num(flat[j + 1]));
        return hash;
      });
    },
    async putMember(index, id, value, ttlMs, max) {
      await safeEval(
        client,
        PUT_MEMBER,
        [index, memberSeenKey(index)],
        [at(), id, value, String(Math.ceil(ttlMs)), String(max)],
      );
    },
    async readMembers(index, ttlMs) {
      const keys = [index, memberSeenKey(index)];
      const reply = replyArray(
        await safeEval(client, READ_MEMBERS, keys, [at(), String(Math.ceil(ttlMs))]),
        READ_MEMBERS,
      );
      const out: Member[] = [];
      // The Upstash client may parse a JSON-looking value; give it back as text.
      for (let i = 0; i + 1 < reply.length; i += 2) out.push({ id: String(reply[i]), value: asText(reply[i + 1]) });
      return out;
    },
    async appendLines(adds: readonly LineAppend[]) {
      const live = adds.filter((a) => a.lines.length > 0);
      if (live.length === 0) return;
      const args: string[] = [];
      for (const add of live) {
        const ttl = String(Math.max(1, Math.ceil(add.ttlMs)));
        args.push(ttl, String(add.maxFields), String(Math.max(0, Math.floor(add.maxBytes))), String(add.lines.length));
        for (const [field, line] of add.lines) args.push(field, line);
      }
      await safeEval(
        client,
        APPEND_LINES,
        live.map((a) => a.key),
        args,
      );
    },
    async readLines(keys, field) {
      if (keys.length === 0) return [];
      const reply = replyArray(await safeEval(client, READ_LINES, keys, [field]), READ_LINES);
      // A one-line value may look like JSON to the Upstash client; asText gives it back as text.
      return keys.map((_, i) => splitLines(reply[i] === undefined || reply[i] === '' ? undefined : asText(reply[i])));
    },
  };
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
