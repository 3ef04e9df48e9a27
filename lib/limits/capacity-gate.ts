/**
 * The per-model capacity gate: C slots, each tier owning a reserved part and lending
 * some of its idle part to others (borrowing as in Kubernetes API Priority and
 * Fairness). A tier always gets a slot within its reservation while the model has a
 * free slot; beyond it, only from the unreserved remainder and what idle tiers lend.
 *
 * A lender that needs its slots back is refused only when every slot is taken, and
 * the gate cannot see its waiting requests between its attempts. So a refusal of a
 * tier below its reservation marks it as reclaiming (takeSlot): until its own slots
 * are back up to its reservation, or the mark lapses, no tier may borrow its idle
 * part, so a slot that frees goes to it (or to another tier within its own
 * reservation), not to a borrower that happens to ask first. Retrying within the
 * mark, it waits at most for the borrowed slots in flight to finish (one upstream
 * service time) plus its retry interval.
 *
 * Within a tier, several dispatchers ask for the same slots, each for its own
 * earliest-deadline waiter, and the one whose call just ended asks first. So an
 * asker refused by a full room (its free slots, if any, other tiers' kept headroom) claims
 * the tier for its waiter (takeSlot's claims): while the claim
 * stands, an asker whose waiter's deadline is later may not take the last slot the
 * claimant could have had. Without it, one dispatcher's waiters can lose every
 * race to another's newer ones until they expire.
 *
 * Claims also carry the tier order across dispatchers: an ask that yields to heavier
 * tiers (`yieldTo`, lib/dispatch/flow/tier-order.ts) leaves a slot to a heavier tier's
 * claimant that could take it, and it sets no reclaim mark (and drops its own), which
 * would keep its idle reservation from the very tiers it yields to. Not only while their
 * claim stands: a claim ends at its claimant's refusal with a slot free, and a mark set
 * then held the slot until the yielding tier took it (`mixed-overload --dispatchers 2`:
 * offline started while batch waited, in both dispatchers' rooms).
 * The Lua twin is lib/store/redis/slot.ts.
 */
import { own } from '../lookup.js';

export interface TierShare {
  readonly reserved: number;
  readonly lendable: number;
  /**
   * Idle reserved slots the tier does not lend even within `lendable` (its headroom), counted
   * against what it holds when the gate decides: an asker's view of the counts is its last
   * answer, and another dispatcher may have taken a slot of the tier since.
   */
  readonly keep?: number;
  /**
   * The keep is lent too while the gate's `releasesNear` calls are expected to end within
   * this long: the lender's next request would have one of their slots soon anyway. Counted
   * over every dispatcher's calls, which no one dispatcher sees.
   */
  readonly keepUnlessEndsWithinMs?: number;
}

export interface GateSpec {
  readonly capacity: number;
  readonly tiers: Readonly<Record<string, TierShare>>;
  /** Calls in flight that must be expected to end soon for a tier's keep to be lent (keepUnlessEndsWithinMs). */
  readonly releasesNear?: number;
}

/**
 * How long a refused tier below its reservation stays reclaiming after its last
 * refusal. A refused request comes back after the gate's retryAfterMs (at most
 * 100 ms) at the earliest, but a broker resumes a suspended message later than
 * asked (RocketMQ 5.5's Suspend, scripts/rocketmq/README.md); a mark that
 * lapsed before the retry would reopen the race it exists to close. Longer
 * costs borrowers: once the reclaiming tier's demand is gone (served below its
 * reservation, or its requests expired), its lendable slots stay idle this long.
 */
export const DEFAULT_RECLAIM_MS = 2_000;

/** Tier → ms until which it is reclaiming; a mark is live while its time is later than now. */
export type ReclaimMarks = Readonly<Record<string, number>>;

/** Who asks for a slot (a dispatcher) and the deadline of the waiter it asks for. */
export interface SlotAsker {
  readonly asker: string;
  readonly deadline: number;
}

/**
 * A tier's claim: the asker refused by a full room with the earliest waiting deadline,
 * standing until `until` (such a refusal renews it) or its deadline, whichever is first.
 * The claimant's grant ends it, and so does its refusal while a slot is free.
 */
export interface SlotClaim extends SlotAsker {
  readonly until: number;
}

export type SlotClaims = Readonly<Record<string, SlotClaim>>;

/** The ask a slot request makes: a named asker with a finite deadline, or none (it claims nothing). */
export function slotAsk(request: { readonly asker?: string; readonly deadline?: number }): SlotAsker | undefined {
  return request.asker && request.deadline !== undefined && Number.isFinite(request.deadline)
    ? { asker: request.asker, deadline: request.deadline }
    : undefined;
}

/** Slots held, all tiers together. */
export function slotsInUse(inUse: Readonly<Record<string, number>>): number {
  let n = 0;
  for (const k of Object.values(inUse)) n += k;
  return n;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Whether a call expected to end `endInMs` from now (below zero: overdue) counts as ending
 * within `withinMs`. One overdue by more than that outran its estimate, and when it ends is
 * anyone's guess: counted as near, offline calls ten seconds past their estimates lent realtime's
 * last slot to more minute-long calls (on 8 slots, 25 realtime requests expired behind them).
 */
export function endsNear(endInMs: number, withinMs: number): boolean {
  return endInMs <= withinMs && endInMs >= -withinMs;
}

/** How many slots of a tier it does not lend now: its keep, unless enough calls in flight end soon. */
function keptBack(spec: GateSpec, share: TierShare, endsInMs: readonly number[]): number {
  const keep = share.keep ?? 0;
  if (keep <= 0 || share.keepUnlessEndsWithinMs === undefined || spec.releasesNear === undefined) return keep;
  let near = 0;
  for (const ms of endsInMs) if (endsNear(ms, share.keepUnlessEndsWithinMs)) near++;
  return near >= spec.releasesNear ? 0 : keep;
}

/** Free slots the keeps of the tiers other than `tier` hold idle now (keptBack, up to each tier's idle reservation). */
function keptIdle(
  spec: GateSpec,
  inUse: Readonly<Record<string, number>>,
  tier: string,
  endsInMs: readonly number[],
): number {
  let kept = 0;
  for (const [name, share] of Object.entries(spec.tiers)) {
    if (name === tier) continue;
    const idle = Math.max(0, share.reserved - (own(inUse, name) ?? 0));
    kept += Math.min(idle, keptBack(spec, share, endsInMs));
  }
  return kept;
}

export function mayTakeSlot(
  spec: GateSpec,
  inUse: Readonly<Record<string, number>>,
  tier: string,
  reclaiming: ReadonlySet<string> = NONE,
  /** When each call in flight is expected to end, in ms from now (overdue ones below zero). */
  endsInMs: readonly number[] = [],
): boolean {
  let total = 0;
  let borrowed = 0;
  let reservedSum = 0;
  let lendOffer = 0;
  for (const [name, share] of Object.entries(spec.tiers)) {
    const used = own(inUse, name) ?? 0;
    reservedSum += share.reserved;
    borrowed += Math.max(0, used - share.reserved);
    if (name !== tier && !reclaiming.has(name)) {
      const idle = Math.max(0, share.reserved - used - keptBack(spec, share, endsInMs));
      lendOffer += Math.min(idle, share.lendable);
    }
  }
  for (const [name, used] of Object.entries(inUse)) {
    total += used;
    // A tier missing from the spec owns nothing: everything it holds is borrowed.
    if (!Object.hasOwn(spec.tiers, name)) borrowed += used;
  }
  if (total >= spec.capacity) return false;
  const held = own(inUse, tier) ?? 0;
  const reserved = own(spec.tiers, tier)?.reserved ?? 0;
  if (held < reserved) return true;
  const unreserved = Math.max(0, spec.capacity - reservedSum);
  return borrowed + 1 <= unreserved + lendOffer;
}

/** What a slot decision reads besides the counts and the marks; every part optional. */
export interface SlotTakeOptions {
  /** Whether the asker holds more of the tier waiting after this one (default true). */
  readonly moreWaiting?: boolean;
  /** The asker and its waiter's deadline; without it the ask claims nothing and yields to every claim. */
  readonly ask?: SlotAsker;
  readonly claims?: SlotClaims;
  /** When each call in flight is expected to end, in ms from now (mayTakeSlot). */
  readonly endsInMs?: readonly number[];
  /**
   * Heavier tiers this ask yields to (tier-order.ts): named, this tier sets no reclaim mark and
   * drops its own; a slot the claimant of one of them could take stays for it.
   */
  readonly yieldTo?: readonly string[];
}

/**
 * One slot decision with its reclaim marks: the marks it reads (expired ones
 * dropped) and the marks to keep. A refusal below the tier's reservation marks it
 * (never shortening a mark); a grant that brings it to its reservation clears it,
 * and so does a grant to an asker with nothing more of the tier waiting
 * (`moreWaiting` false): the mark stands for demand, and that demand is served.
 */
export function takeSlot(
  spec: GateSpec,
  inUse: Readonly<Record<string, number>>,
  tier: string,
  marks: ReclaimMarks,
  now: number,
  reclaimMs: number,
  options: SlotTakeOptions = {},
): { readonly granted: boolean; readonly marks: Record<string, number>; readonly claims: Record<string, SlotClaim> } {
  const { moreWaiting = true, ask, claims = {}, endsInMs = [], yieldTo = [] } = options;
  const live: Record<string, number> = {};
  for (const [name, until] of Object.entries(marks)) if (until > now) live[name] = until;
  const liveClaims: Record<string, SlotClaim> = {};
  for (const [name, c] of Object.entries(claims)) if (c.until > now && c.deadline > now) liveClaims[name] = c;
  // A tier that yields reclaims nothing: its mark would keep its idle reservation from the tiers it
  // yields to whenever no claim of theirs stands, as after any refusal of theirs with a slot free.
  const yielding = yieldTo.some((name) => name !== tier);
  if (yielding) delete live[tier];
  // A heavier tier waits in some dispatcher (its claim stands).
  const heavierWaits = yieldTo.filter((name) => name !== tier && own(liveClaims, name) !== undefined);
  const reclaiming = new Set(Object.keys(live));
  const held = own(inUse, tier) ?? 0;
  let granted = mayTakeSlot(spec, inUse, tier, reclaiming, endsInMs);
  const claim = own(liveClaims, tier);
  const yields =
    claim !== undefined && (ask === undefined || (claim.asker !== ask.asker && claim.deadline < ask.deadline));
  // An earlier waiter elsewhere: take a slot only if the claimant could still take one after it.
  const after = { ...inUse, [tier]: held + 1 };
  if (granted && yields) granted = mayTakeSlot(spec, after, tier, reclaiming, endsInMs);
  // Likewise a heavier tier's claimant; a slot it could not take anyway still goes to this ask.
  if (granted)
    granted = !heavierWaits.some(
      (name) =>
        mayTakeSlot(spec, inUse, name, reclaiming, endsInMs) && !mayTakeSlot(spec, after, name, reclaiming, endsInMs),
    );
  const reserved = own(spec.tiers, tier)?.reserved ?? 0;
  if (!granted && !yielding && held < reserved) live[tier] = Math.max(own(live, tier) ?? 0, now + reclaimMs);
  if (granted && (held + 1 >= reserved || !moreWaiting)) delete live[tier];
  const full = slotsInUse(inUse) + keptIdle(spec, inUse, tier, endsInMs) >= spec.capacity;
  // Only a full room is a race to win, its free slots all held idle by other tiers' keeps counted
  // full: every ask of a long call meets the same keeps, and without a claim one dispatcher's
  // waiters lost race after race to the other's while a keep held (held in its room 40 s, sent
  // back, and again). Refused while any other slot is free, the asker's own spec holds it back,
  // and a claim would only hold back the askers who could use that slot.
  if (ask && !granted && !yields && full)
    liveClaims[tier] = { asker: ask.asker, deadline: ask.deadline, until: now + reclaimMs };
  else if (ask && claim?.asker === ask.asker && (granted || !full)) delete liveClaims[tier];
  return { granted, marks: live, claims: liveClaims };
}

/** Splits C slots by share fractions; rounding leftovers stay unreserved, free to all. */
export function gateFromShares(
  capacity: number,
  shares: Readonly<Record<string, { readonly share: number; readonly lendable: number }>>,
): GateSpec {
  const tiers: Record<string, TierShare> = {};
  for (const [name, s] of Object.entries(shares)) {
    const reserved = Math.floor(capacity * s.share);
    tiers[name] = { reserved, lendable: Math.floor(reserved * s.lendable) };
  }
  return { capacity, tiers };
}
