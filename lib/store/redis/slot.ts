/**
 * Capacity-gate slot leases: the Lua twin of lib/limits/capacity-gate.ts as the
 * embedded store uses it. Three keys under the gate's hash tag: a sorted set of
 * lease ids scored by expiry (so expired leases are found without a scan), a
 * hash of lease id → tier (so a release needs only the id), and a hash of
 * tier → reclaiming-until ms (takeSlot's marks).
 */
import { DEFAULT_RECLAIM_MS } from '../../limits/capacity-gate.js';
import type { SlotDecision, SlotRequest } from '../types.js';
import { GC_SLACK_MS } from './admit.js';
import { defineScript, LUA_PRELUDE, num, replyArray, safeEval, type EvalClient } from './safe-eval.js';

/** The second key of a gate; same `{gate:…}` tag, same cluster slot. */
export function slotTiersKey(gateKey: string): string {
  return `${gateKey}:tiers`;
}

/** The third key of a gate; apart from the leases so its TTL follows the latest mark, not the longest lease. */
export function slotReclaimKey(gateKey: string): string {
  return `${gateKey}:reclaiming`;
}

/** Where a release is announced: same hash tag as the gate. */
export function slotReleasedChannel(gateKey: string): string {
  return `${gateKey}:released`;
}

/** A refused slot is worth retrying within this long; expiry is only the worst case. */
export const SLOT_RETRY_CAP_MS = 100;

/**
 * KEYS: lease expiries (zset), lease tiers (hash), reclaim marks (hash).
 * ARGV: now ('' = Redis TIME), tier, capacity, lease id, lease ms, gc slack, retry cap,
 *       reclaim ms, more waiting (1/0), tier count, then per tier: name, reserved, lendable.
 * Reply: granted, retryAfterMs, then tier/count pairs in use (after a grant, including it).
 */
export const ACQUIRE_SLOT = defineScript(
  'acquire-slot',
  `${LUA_PRELUDE}
local now = now_ms(ARGV[1])
local tier = ARGV[2]
local capacity = tonumber(ARGV[3])
local leaseId = ARGV[4]
local leaseMs = tonumber(ARGV[5])
local slack = tonumber(ARGV[6])
local retryCap = tonumber(ARGV[7])
local reclaimMs = tonumber(ARGV[8])
local moreWaiting = ARGV[9] == '1'
local spec = {}
local names = {}
for i = 1, tonumber(ARGV[10]) do
  local name = ARGV[8 + i * 3]
  spec[name] = {reserved = tonumber(ARGV[9 + i * 3]), lendable = tonumber(ARGV[10 + i * 3])}
  names[#names + 1] = name
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
local inUse, tiersInUse = {}, {}
local pairsFlat = redis.call('HGETALL', KEYS[2])
for i = 1, #pairsFlat, 2 do
  local t = pairsFlat[i + 1]
  if inUse[t] == nil then tiersInUse[#tiersInUse + 1] = t; inUse[t] = 0 end
  inUse[t] = inUse[t] + 1
end
local marks, lapsed = {}, {}
local marksFlat = redis.call('HGETALL', KEYS[3])
for i = 1, #marksFlat, 2 do
  local untilMs = tonumber(marksFlat[i + 1])
  if untilMs > now then marks[marksFlat[i]] = untilMs else lapsed[#lapsed + 1] = marksFlat[i] end
end
if #lapsed > 0 then redis.call('HDEL', KEYS[3], unpack(lapsed)) end

-- takeSlot: mayTakeSlot with the live marks, then the marks to keep
local total, borrowed, reservedSum, lendOffer = 0, 0, 0, 0
for _, name in ipairs(names) do
  local share = spec[name]
  local used = inUse[name] or 0
  reservedSum = reservedSum + share.reserved
  borrowed = borrowed + math.max(0, used - share.reserved)
  if name ~= tier and marks[name] == nil then lendOffer = lendOffer + math.min(math.max(0, share.reserved - used), share.lendable) end
end
for _, name in ipairs(tiersInUse) do
  total = total + inUse[name]
  if spec[name] == nil then borrowed = borrowed + inUse[name] end
end
local own = inUse[tier] or 0
local reserved = 0
if spec[tier] then reserved = spec[tier].reserved end
local may
if total >= capacity then
  may = false
else
  if own < reserved then
    may = true
  else
    may = borrowed + 1 <= math.max(0, capacity - reservedSum) + lendOffer
  end
end

if not may and own < reserved then
  marks[tier] = math.max(marks[tier] or 0, now + reclaimMs)
  redis.call('HSET', KEYS[3], tier, fmt(marks[tier]))
  local latest = now
  for _, untilMs in pairs(marks) do latest = math.max(latest, untilMs) end
  redis.call('PEXPIRE', KEYS[3], math.ceil(latest - now + slack))
elseif may and (own + 1 >= reserved or not moreWaiting) and marks[tier] then
  redis.call('HDEL', KEYS[3], tier)
end

local out
if may then
  redis.call('ZADD', KEYS[1], fmt(now + leaseMs), leaseId)
  redis.call('HSET', KEYS[2], leaseId, tier)
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local ttl = math.ceil(tonumber(last[2]) - now + slack)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  if inUse[tier] == nil then tiersInUse[#tiersInUse + 1] = tier; inUse[tier] = 0 end
  inUse[tier] = inUse[tier] + 1
  out = {1, 0}
else
  local retry = retryCap
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if #first > 0 then retry = math.max(1, math.min(tonumber(first[2]) - now, retryCap)) end
  out = {0, ret(retry)}
end
for _, name in ipairs(tiersInUse) do
  out[#out + 1] = name
  out[#out + 1] = inUse[name]
end
return out
`,
);

export async function acquireSlotScript(client: EvalClient, request: SlotRequest, now: number | undefined): Promise<SlotDecision> {
  const tiers = Object.entries(request.tiers);
  const args = [
    now === undefined ? '' : String(now),
    request.tier,
    String(request.capacity),
    request.leaseId,
    String(request.leaseMs),
    String(GC_SLACK_MS),
    String(SLOT_RETRY_CAP_MS),
    String(request.reclaimMs ?? DEFAULT_RECLAIM_MS),
    request.moreWaiting === false ? '0' : '1',
    String(tiers.length),
  ];
  for (const [name, share] of tiers) args.push(name, String(share.reserved), String(share.lendable));
  const keys = [request.key, slotTiersKey(request.key), slotReclaimKey(request.key)];
  const reply = replyArray(await safeEval(client, ACQUIRE_SLOT, keys, args), ACQUIRE_SLOT);
  const inUse: Record<string, number> = {};
  // Tier names come back as strings, except that the Upstash client turns numeric-looking ones into numbers.
  for (let i = 2; i < reply.length; i += 2) inUse[String(reply[i])] = num(reply[i + 1]);
  if (num(reply[0]) === 1) return { granted: true, inUse };
  return { granted: false, inUse, retryAfterMs: num(reply[1]) };
}

/**
 * KEYS: lease expiries, lease tiers. ARGV: lease id, release channel.
 * Reply: 1 if the lease was held (and the release announced on the channel), else 0.
 */
export const RELEASE_SLOT = defineScript(
  'release-slot',
  `local held = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if held == 1 then redis.call('PUBLISH', ARGV[2], '1') end
return held
`,
);

export async function releaseSlotScript(client: EvalClient, key: string, leaseId: string): Promise<void> {
  await safeEval(client, RELEASE_SLOT, [key, slotTiersKey(key)], [leaseId, slotReleasedChannel(key)]);
}
