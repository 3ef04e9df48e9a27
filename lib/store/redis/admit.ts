/**
 * Admission, reconciliation and reservoir exit: the Lua twins of
 * lib/limits/fixed-window.ts as the embedded store uses it. One admission is
 * one script call, so one round trip however many limits it checks.
 *
 * A window counter is a hash {s = window start, c = count}. A counter whose `s`
 * is not the current window start counts as empty — the same rule as
 * checkWindow — so expiry is only garbage collection, and a counter kept a
 * little longer than its window changes no decision.
 */
import { alignedWindowStart } from '../../limits/fixed-window.js';
import { parseReservoirPlace } from '../keys.js';
import type { AdmitDecision, AdmitInput, Reconciliation, ReservoirPlace, WindowState } from '../types.js';
import { defineScript, LUA_PRELUDE, num, replyArray, safeEval, type EvalClient } from './safe-eval.js';

/**
 * Counters outlive their window by this much. Only memory depends on it; it is
 * generous so that a store driven by a virtual clock (which can stand still
 * while real time passes) never loses a counter its clock still needs.
 */
export const GC_SLACK_MS = 60_000;

/**
 * The reservoir is a sorted set of places: member = request id, score = when the
 * place lapses (admission time + holdMs, on the script's clock). Lapsed places are
 * dropped before counting, so a release lost to an outage frees its place anyway.
 */

/** Matches the embedded store: a full reservoir is worth retrying after this long. */
export const RESERVOIR_RETRY_MS = 1000;

/**
 * KEYS: window keys 1..n, then the reservoir key if any.
 * ARGV: now ('' = Redis TIME), n, reservoir max ('' = none), gc slack, reservoir retry,
 *       reservoir member, reservoir hold ms, then per window: limit, windowMs, cost.
 * Reply: allowed, index of the first refusing window (0 none, -1 the reservoir),
 *        retryAfterMs, queued, now, then the count each window held before this request.
 */
export const ADMIT = defineScript(
  'admit',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local n = tonumber(ARGV[2])
local resMax = tonumber(ARGV[3])
local slack = tonumber(ARGV[4])
local used, starts = {}, {}
local denied, retry = 0, 0
for i = 1, n do
  local limit = tonumber(ARGV[5 + i * 3])
  local windowMs = tonumber(ARGV[6 + i * 3])
  local cost = tonumber(ARGV[7 + i * 3])
  local start = math.floor(now / windowMs) * windowMs
  local h = redis.call('HMGET', KEYS[i], 's', 'c')
  local u = 0
  if h[1] and tonumber(h[1]) == start then u = tonumber(h[2]) end
  used[i], starts[i] = u, start
  if u + cost > limit then
    if denied == 0 then denied = i end
    local reset = start + windowMs - now
    if reset > retry then retry = reset end
  end
end
local queued = 0
local res = KEYS[n + 1]
if resMax then
  -- A counter left by an older version is not a set of places; it would only ever be stuck.
  local kind = redis.call('TYPE', res)['ok']
  if kind ~= 'zset' and kind ~= 'none' then redis.call('DEL', res) end
  redis.call('ZREMRANGEBYSCORE', res, '-inf', fmt(now))
  queued = redis.call('ZCARD', res)
end
local out = {}
if denied == 0 and resMax and queued >= resMax then
  denied, retry = -1, tonumber(ARGV[5])
end
if denied ~= 0 then
  out = {0, denied, ret(retry), ret(queued), ret(now)}
else
  for i = 1, n do
    local windowMs = tonumber(ARGV[6 + i * 3])
    local cost = tonumber(ARGV[7 + i * 3])
    if used[i] == 0 then
      redis.call('HSET', KEYS[i], 's', fmt(starts[i]), 'c', fmt(cost))
      redis.call('PEXPIRE', KEYS[i], math.ceil(starts[i] + windowMs - now + slack))
    else
      -- Same window as the stored start, whose expiry is already set: PEXPIRE
      -- is the dearest call here, so it runs once per window, not per request.
      redis.call('HSET', KEYS[i], 'c', fmt(used[i] + cost))
    end
  end
  if resMax then
    redis.call('ZADD', res, fmt(now + tonumber(ARGV[7])), ARGV[6])
    local last = redis.call('ZRANGE', res, -1, -1, 'WITHSCORES')
    redis.call('PEXPIRE', res, math.max(1, math.ceil(tonumber(last[2]) - now + slack)))
    queued = redis.call('ZCARD', res)
  end
  out = {1, 0, 0, ret(queued), ret(now)}
end
for i = 1, n do out[#out + 1] = ret(used[i]) end
return out
`,
);

export async function admitScript(
  client: EvalClient,
  input: AdmitInput,
  now: number | undefined,
): Promise<AdmitDecision> {
  const keys = input.limits.map((l) => l.key);
  if (input.reservoir) keys.push(input.reservoir.key);
  const args = [
    now === undefined ? '' : String(now),
    String(input.limits.length),
    input.reservoir ? String(input.reservoir.max) : '',
    String(GC_SLACK_MS),
    String(RESERVOIR_RETRY_MS),
    input.reservoir?.member ?? '',
    input.reservoir ? String(input.reservoir.holdMs) : '0',
  ];
  for (const l of input.limits) args.push(String(l.limit), String(l.windowMs), String(l.cost));
  const reply = replyArray(await safeEval(client, ADMIT, keys, args), ADMIT).map(num);
  const [allowedFlag, denied, retryAfterMs, queued, at] = reply as [number, number, number, number, number];
  const allowed = allowedFlag === 1;
  const windows: WindowState[] = input.limits.map((l, i) => {
    const used = reply[5 + i]!;
    const windowStart = alignedWindowStart(at, l.windowMs);
    return {
      scope: l.scope,
      unit: l.unit,
      limit: l.limit,
      windowMs: l.windowMs,
      remaining: Math.max(0, l.limit - used - (allowed ? l.cost : 0)),
      windowStart,
      resetMs: windowStart + l.windowMs - at,
    };
  });
  if (allowed) return { allowed: true, windows, queued };
  const limit = denied > 0 ? input.limits[denied - 1] : undefined;
  return {
    allowed: false,
    windows,
    deniedBy: limit ? { scope: limit.scope, unit: limit.unit } : { scope: 'reservoir' },
    retryAfterMs,
    queued,
  };
}

/**
 * KEYS: window keys. ARGV: per key, the window start it was charged in and the delta.
 * A counter that has moved on to a later window is left alone (reconcileWindow).
 * One call per finished request: its windows share the tenant's hash tag, so
 * the call stays in one cluster slot; batching several tenants' corrections
 * into one call would not.
 */
export const RECONCILE = defineScript(
  'reconcile',
  `${LUA_PRELUDE}
for i = 1, #KEYS do
  local h = redis.call('HMGET', KEYS[i], 's', 'c')
  if h[1] and tonumber(h[1]) == tonumber(ARGV[i * 2 - 1]) then
    local c = tonumber(h[2]) + tonumber(ARGV[i * 2])
    if c < 0 then c = 0 end
    redis.call('HSET', KEYS[i], 'c', fmt(c))
  end
end
return 0
`,
);

export async function reconcileScript(client: EvalClient, items: readonly Reconciliation[]): Promise<void> {
  if (items.length === 0) return;
  const args: string[] = [];
  for (const item of items) args.push(String(item.windowStart), String(item.delta));
  await safeEval(
    client,
    RECONCILE,
    items.map((i) => i.key),
    args,
  );
}

/** KEYS: the reservoir. ARGV: the member. Redis drops a sorted set with its last member, as the embedded store does. */
export const LEAVE_RESERVOIR = defineScript(
  'leave-reservoir',
  `if redis.call('TYPE', KEYS[1])['ok'] == 'zset' then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`,
);

export async function leaveReservoirScript(client: EvalClient, place: string): Promise<void> {
  const at = parseReservoirPlace(place);
  if (at) await safeEval(client, LEAVE_RESERVOIR, [at.key], [at.member]);
}

/** KEYS: the reservoir. ARGV: now ('' = Redis TIME). Its live places, read only (the embedded store's reservoirDepth). */
export const RESERVOIR_DEPTH = defineScript(
  'reservoir-depth',
  `${LUA_PRELUDE}
if redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then return 0 end
return redis.call('ZCOUNT', KEYS[1], '(' .. fmt(now_ms(ARGV[1])), '+inf')
`,
);

export async function reservoirDepthScript(client: EvalClient, key: string, now: number | undefined): Promise<number> {
  return num(await safeEval(client, RESERVOIR_DEPTH, [key], [now === undefined ? '' : String(now)]));
}

/**
 * KEYS: the reservoir. ARGV: now ('' = Redis TIME), limit. Its live places as member, lapse
 * pairs, first to lapse first; read only (the embedded store's reservoirPlaces).
 */
export const RESERVOIR_PLACES = defineScript(
  'reservoir-places',
  `${LUA_PRELUDE}
local limit = tonumber(ARGV[2])
if limit < 1 or redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then return {} end
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. fmt(now_ms(ARGV[1])), '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
`,
);

export async function reservoirPlacesScript(
  client: EvalClient,
  key: string,
  limit: number,
  now: number | undefined,
): Promise<readonly ReservoirPlace[]> {
  const reply = replyArray(
    await safeEval(
      client,
      RESERVOIR_PLACES,
      [key],
      [now === undefined ? '' : String(now), String(Math.max(0, Math.floor(limit)))],
    ),
    RESERVOIR_PLACES,
  );
  const places: ReservoirPlace[] = [];
  for (let i = 0; i + 1 < reply.length; i += 2) places.push({ member: String(reply[i]), lapsesAt: num(reply[i + 1]) });
  return places;
}

/** KEYS: the reservoir. ARGV: the members. Those whose places it took, in order (the embedded store's shedReservoir). */
export const SHED_RESERVOIR = defineScript(
  'shed-reservoir',
  `if redis.call('TYPE', KEYS[1])['ok'] ~= 'zset' then return {} end
local shed = {}
for i = 1, #ARGV do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then shed[#shed + 1] = ARGV[i] end
end
return shed
`,
);

export async function shedReservoirScript(
  client: EvalClient,
  key: string,
  members: readonly string[],
): Promise<readonly string[]> {
  if (members.length === 0) return [];
  return replyArray(await safeEval(client, SHED_RESERVOIR, [key], [...members]), SHED_RESERVOIR).map(String);
}
