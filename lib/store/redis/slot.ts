/**
 * Capacity-gate slot leases: the Lua twin of lib/limits/capacity-gate.ts as the
 * embedded store uses it. Five keys under the gate's hash tag: a sorted set of
 * lease ids scored by expiry (so expired leases are found without a scan), a
 * hash of lease id → tier (so a release needs only the id), a hash of
 * tier → reclaiming-until ms (takeSlot's marks), a hash of tier → its claim
 * (`until|deadline|asker`, takeSlot's claims), and a sorted set of lease ids
 * scored by when their calls are expected to end (a tier's keep).
 */
import { DEFAULT_RECLAIM_MS, slotAsk } from '../../limits/capacity-gate.js';
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

/** The fourth key of a gate: each tier's claim by the asker with the earliest refused deadline. */
export function slotClaimsKey(gateKey: string): string {
  return `${gateKey}:claims`;
}

/** The fifth key of a gate: leases by when their calls are expected to end (a call of unknown length is absent). */
export function slotEndsKey(gateKey: string): string {
  return `${gateKey}:ends`;
}

/** Where a release is announced: same hash tag as the gate. */
export function slotReleasedChannel(gateKey: string): string {
  return `${gateKey}:released`;
}

/** A refused slot is worth retrying within this long; expiry is only the worst case. */
export const SLOT_RETRY_CAP_MS = 100;

/**
 * KEYS: lease expiries (zset), lease tiers (hash), reclaim marks (hash), claims (hash), expected ends (zset).
 * ARGV: now ('' = Redis TIME), tier, capacity, lease id, lease ms, gc slack, retry cap,
 *       reclaim ms, more waiting (1/0), asker ('' = none), deadline ('' = none),
 *       expected ms ('' = not known), releases near ('' = none), tier count,
 *       then per tier: name, reserved, lendable, keep, keep-unless-ends-within ms ('' = none),
 *       then the tiers it yields to (takeSlot's yieldTo), each one argument.
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
local asker = ARGV[10]
local hasAsk = asker ~= '' and ARGV[11] ~= ''
local askDeadline = tonumber(ARGV[11])
local expectedMs = tonumber(ARGV[12])
local releasesNear = tonumber(ARGV[13])
local spec = {}
local names = {}
local tierCount = tonumber(ARGV[14])
for i = 1, tierCount do
  local at = 9 + i * 5
  local name = ARGV[at + 1]
  spec[name] = {
    reserved = tonumber(ARGV[at + 2]),
    lendable = tonumber(ARGV[at + 3]),
    keep = tonumber(ARGV[at + 4]),
    nearMs = tonumber(ARGV[at + 5]),
  }
  names[#names + 1] = name
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', fmt(now))
  redis.call('HDEL', KEYS[2], unpack(expired))
  redis.call('ZREM', KEYS[5], unpack(expired))
end
-- keptBack: a keep is lent too while releasesNear calls are expected to end within its ms (endsNear: either side of now)
for _, name in ipairs(names) do
  local share = spec[name]
  if share.keep > 0 and share.nearMs and releasesNear then
    local near = redis.call('ZCOUNT', KEYS[5], fmt(now - share.nearMs), fmt(now + share.nearMs))
    if near >= releasesNear then share.keep = 0 end
  end
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
local claims, deadClaims = {}, {}
local claimsFlat = redis.call('HGETALL', KEYS[4])
for i = 1, #claimsFlat, 2 do
  local v = claimsFlat[i + 1]
  local a = string.find(v, '|', 1, true)
  local b = a and string.find(v, '|', a + 1, true)
  local untilMs = a and tonumber(string.sub(v, 1, a - 1))
  local deadline = b and tonumber(string.sub(v, a + 1, b - 1))
  if untilMs and deadline and untilMs > now and deadline > now then
    claims[claimsFlat[i]] = {untilMs = untilMs, deadline = deadline, asker = string.sub(v, b + 1)}
  else
    deadClaims[#deadClaims + 1] = claimsFlat[i]
  end
end
if #deadClaims > 0 then redis.call('HDEL', KEYS[4], unpack(deadClaims)) end
-- a tier that yields reclaims nothing; a heavier tier waits in some dispatcher when its claim stands
local heavierWaits = {}
local yielding = false
for i = 15 + tierCount * 5, #ARGV do
  if ARGV[i] ~= tier then
    yielding = true
    if claims[ARGV[i]] ~= nil then heavierWaits[#heavierWaits + 1] = ARGV[i] end
  end
end
if yielding and marks[tier] then
  marks[tier] = nil
  redis.call('HDEL', KEYS[3], tier)
end

-- mayTakeSlot with the live marks for tier \`who\`, the asker's tier holding \`extra\` more
local function may_take_for(who, extra)
  local total, borrowed, reservedSum, lendOffer = 0, 0, 0, 0
  for _, name in ipairs(names) do
    local share = spec[name]
    local used = inUse[name] or 0
    if name == tier then used = used + extra end
    reservedSum = reservedSum + share.reserved
    borrowed = borrowed + math.max(0, used - share.reserved)
    if name ~= who and marks[name] == nil then
      lendOffer = lendOffer + math.min(math.max(0, share.reserved - used - share.keep), share.lendable)
    end
  end
  for _, name in ipairs(tiersInUse) do
    total = total + inUse[name]
    if spec[name] == nil then borrowed = borrowed + inUse[name] end
  end
  total = total + extra
  if spec[tier] == nil then borrowed = borrowed + extra end
  if total >= capacity then return false end
  local held = inUse[who] or 0
  if who == tier then held = held + extra end
  local whoReserved = 0
  if spec[who] then whoReserved = spec[who].reserved end
  if held < whoReserved then return true end
  return borrowed + 1 <= math.max(0, capacity - reservedSum) + lendOffer
end
local function may_take(extra) return may_take_for(tier, extra) end
local own = inUse[tier] or 0
local reserved = 0
if spec[tier] then reserved = spec[tier].reserved end

-- takeSlot: an earlier waiter's claim elsewhere leaves it the last slot it could take; then marks and claims to keep
local may = may_take(0)
local claim = claims[tier]
local yields = claim ~= nil and ((not hasAsk) or (claim.asker ~= asker and claim.deadline < askDeadline))
if may and yields then may = may_take(1) end
-- likewise a heavier tier's claimant; a slot it could not take anyway still goes to this ask
if may then
  for _, heavier in ipairs(heavierWaits) do
    if may_take_for(heavier, 0) and not may_take_for(heavier, 1) then may = false end
  end
end

if not may and not yielding and own < reserved then
  marks[tier] = math.max(marks[tier] or 0, now + reclaimMs)
  redis.call('HSET', KEYS[3], tier, fmt(marks[tier]))
  local latest = now
  for _, untilMs in pairs(marks) do latest = math.max(latest, untilMs) end
  redis.call('PEXPIRE', KEYS[3], math.ceil(latest - now + slack))
elseif may and (own + 1 >= reserved or not moreWaiting) and marks[tier] then
  redis.call('HDEL', KEYS[3], tier)
end
-- only a full room is a race to win, its free slots all held idle by other tiers' keeps counted full:
-- refused with another slot free, the asker's own spec holds it back
local held = 0
for _, name in ipairs(tiersInUse) do held = held + inUse[name] end
for _, name in ipairs(names) do
  if name ~= tier then
    held = held + math.min(math.max(0, spec[name].reserved - (inUse[name] or 0)), spec[name].keep)
  end
end
local full = held >= capacity
if hasAsk and not may and not yields and full then
  claims[tier] = {untilMs = now + reclaimMs, deadline = askDeadline, asker = asker}
  redis.call('HSET', KEYS[4], tier, fmt(now + reclaimMs) .. '|' .. fmt(askDeadline) .. '|' .. asker)
  local latest = now
  for _, c in pairs(claims) do latest = math.max(latest, c.untilMs) end
  redis.call('PEXPIRE', KEYS[4], math.ceil(latest - now + slack))
elseif hasAsk and claim ~= nil and claim.asker == asker and (may or not full) then
  redis.call('HDEL', KEYS[4], tier)
end

local out
if may then
  redis.call('ZADD', KEYS[1], fmt(now + leaseMs), leaseId)
  redis.call('HSET', KEYS[2], leaseId, tier)
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  local ttl = math.ceil(tonumber(last[2]) - now + slack)
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
  if expectedMs then
    redis.call('ZADD', KEYS[5], fmt(now + expectedMs), leaseId)
    redis.call('PEXPIRE', KEYS[5], ttl)
  end
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

export async function acquireSlotScript(
  client: EvalClient,
  request: SlotRequest,
  now: number | undefined,
): Promise<SlotDecision> {
  const tiers = Object.entries(request.tiers);
  // The same ask the embedded store takes.
  const ask = slotAsk(request);
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
    ask?.asker ?? '',
    ask ? String(ask.deadline) : '',
    finiteOrBlank(request.expectedMs),
    finiteOrBlank(request.releasesNear),
    String(tiers.length),
  ];
  for (const [name, share] of tiers)
    args.push(
      name,
      String(share.reserved),
      String(share.lendable),
      String(share.keep ?? 0),
      finiteOrBlank(share.keepUnlessEndsWithinMs),
    );
  args.push(...(request.yieldTo ?? []));
  const keys = [
    request.key,
    slotTiersKey(request.key),
    slotReclaimKey(request.key),
    slotClaimsKey(request.key),
    slotEndsKey(request.key),
  ];
  const reply = replyArray(await safeEval(client, ACQUIRE_SLOT, keys, args), ACQUIRE_SLOT);
  const inUse: Record<string, number> = {};
  // Tier names come back as strings, except that the Upstash client turns numeric-looking ones into numbers.
  for (let i = 2; i < reply.length; i += 2) inUse[String(reply[i])] = num(reply[i + 1]);
  if (num(reply[0]) === 1) return { granted: true, inUse };
  return { granted: false, inUse, retryAfterMs: num(reply[1]) };
}

/** Lua reads '' as none: an unknown length, or no rule. */
function finiteOrBlank(n: number | undefined): string {
  return n !== undefined && Number.isFinite(n) ? String(n) : '';
}

/**
 * KEYS: lease expiries, lease tiers, expected ends. ARGV: lease id, release channel.
 * Reply: 1 if the lease was held (and the release announced on the channel), else 0.
 */
export const RELEASE_SLOT = defineScript(
  'release-slot',
  `local held = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if held == 1 then redis.call('PUBLISH', ARGV[2], '1') end
return held
`,
);

export async function releaseSlotScript(client: EvalClient, key: string, leaseId: string): Promise<void> {
  await safeEval(client, RELEASE_SLOT, [key, slotTiersKey(key), slotEndsKey(key)], [leaseId, slotReleasedChannel(key)]);
}
