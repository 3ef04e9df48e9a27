/**
 * A model's slot split as the shared gate (lib/limits/capacity-gate.ts) reads it,
 * derived once per policy version, and what one request may borrow.
 *
 * Work-conserving: a tier's idle reserved slots are lent whole. Lending never
 * traps the lender: a lender that has asked for slots lately (its requests keep
 * coming) keeps a headroom of its idle slots back from calls expected to hold a
 * slot longer than a tenth of its maximum queue wait (the token estimate times
 * the model's observed speed), so its next request finds a slot at once instead
 * of waiting for a long borrowed call to end. Short calls, and every call while the
 * lender is quiet, may take everything.
 *
 * How much, and whether the headroom is lent too, depends on the pool. A kept slot
 * idles whenever the lender does not need it, so on a small pool, where one slot is
 * more than HEADROOM_SHARE of it, the lender keeps HEADROOM and lends it too while
 * RELEASES_NEAR calls in flight are expected to end within that tenth (the lender's
 * next request takes the first of those slots, since releases go to the heavier tier
 * first; the others cover estimates that were short, or a second request). On a
 * larger pool it keeps HEADROOM_SHARE of the slots, whole ones, and never lends
 * them: there releases are always near by the estimates, and the lender still met
 * stretches with none (calls that started together in a burst end together, and the
 * estimates that come out short gather at the earliest ends).
 *
 * A call longer than the lender's whole maximum wait is kept from more: besides the
 * headroom, as many of the lender's idle slots as its own demand rose above what it
 * holds within that wait (demand-peak.ts), less what is due to end soon. Its requests
 * cannot outwait such a call, and its next rise comes before the call ends: on 8 slots,
 * realtime far inside its reservation beside offline calls of a minute lost one request
 * in seven with only the headroom kept, as soon as a few of its requests overlapped.
 */
import { gateFromShares, type GateSpec, type TierShare } from '../../limits/capacity-gate.js';
import type { Policy } from '../../policy/schema.js';
import type { TierWeight } from './tier-order.js';

export interface ModelGate {
  /** Every idle reserved slot lendable. */
  readonly open: GateSpec;
  readonly weights: ReadonlyMap<string, TierWeight>;
  /** Per tier: calls expected to hold their slot longer than this do not get its headroom. */
  readonly shortCallMs: ReadonlyMap<string, number>;
  /** Per tier: the policy's maximum queue wait. */
  readonly maxWaitMs: ReadonlyMap<string, number>;
  /** Per tier: the tiers of greater weight, which it yields to while its work has slack (tier-order.ts). */
  readonly heavier: ReadonlyMap<string, readonly string[]>;
  /** What an active lender keeps back from long calls: slots, and whether they are lent while releases are near. */
  readonly headroom: {
    readonly keep: number;
    readonly lentWhileNear: boolean;
    /** Kept from calls the lender can outwait (past its short-call time, within its maximum wait) too. */
    readonly fromOutwaitable: boolean;
  };
}

const cache = new WeakMap<Policy, Map<string, ModelGate>>();

/** The part of a lender's maximum queue wait a borrowed call may last and still take its last idle slots. */
const SHORT_CALL_SHARE_OF_WAIT = 0.1;
/** Idle reserved slots an active lender keeps back from long borrowed calls, on a pool of fewer than 1 / HEADROOM_SHARE slots. */
export const HEADROOM = 1;
/**
 * On a pool of at least 1 / HEADROOM_SHARE slots, the share of them an active lender keeps back
 * (whole slots), never lent. The most the keep may idle: the GPU stays at least 95 % busy while
 * requests wait. On `npm run bench -- seed2-burst` at full size (32 slots; the small run has 8),
 * one slot kept this way took realtime's wait p99 under the priority baseline's, where the
 * headroom lent while releases were near left it above.
 */
export const HEADROOM_SHARE = 0.05;
/**
 * On a pool under this many slots the headroom is kept only from calls the lender cannot outwait
 * (longer than its maximum wait). One kept slot is more than an eighth of such a pool, and lent only
 * while RELEASES_NEAR calls end soon it still idled it while work waited: replayed with a realtime
 * trickle beside batch on 2, 4 and 6 slots, the GPU was 86-87 % busy while requests waited for a slot.
 */
export const HEADROOM_MIN_SLOTS = 8;
/**
 * Calls in flight that must be near their end for the headroom to be lent too (the scheduler counts them).
 * More than two: the earliest expected ends are where the estimates that came out short gather, so the
 * first two often end later than expected (on 8 slots, two let realtime's wait tail pass its 1 s bar in
 * `npm run bench -- seed2-burst`).
 */
export const RELEASES_NEAR = 3;

export function modelGate(policy: Policy, model: string, slots: number): ModelGate {
  let byModel = cache.get(policy);
  if (!byModel) cache.set(policy, (byModel = new Map()));
  // Slots move under a saturation detector (saturation.ts): one gate per count seen.
  const key = `${model}\n${slots}`;
  let gate = byModel.get(key);
  if (gate) return gate;
  const tiers = Object.entries(policy.tiers);
  const open = gateFromShares(
    slots,
    Object.fromEntries(tiers.map(([name, t]) => [name, { share: t.share, lendable: 1 }])),
  );
  const weights = new Map(tiers.map(([name, t]) => [name, { reserved: open.tiers[name]!.reserved, weight: t.weight }]));
  const shortCallMs = new Map(tiers.map(([name, t]) => [name, SHORT_CALL_SHARE_OF_WAIT * t.maxQueueWaitMs]));
  const maxWaitMs = new Map(tiers.map(([name, t]) => [name, t.maxQueueWaitMs]));
  const heavier = new Map(
    tiers.map(([name, t]) => [name, tiers.filter(([, other]) => other.weight > t.weight).map(([other]) => other)]),
  );
  const share = Math.floor(slots * HEADROOM_SHARE);
  const headroom =
    share >= 1
      ? { keep: share, lentWhileNear: false, fromOutwaitable: true }
      : { keep: HEADROOM, lentWhileNear: true, fromOutwaitable: slots >= HEADROOM_MIN_SLOTS };
  gate = { open, weights, shortCallMs, maxWaitMs, heavier, headroom };
  byModel.set(key, gate);
  return gate;
}

/**
 * What a call of `tier`, expected to hold its slot `callMs` (undefined: not known
 * yet), may borrow: everything, except what active lenders keep from calls that
 * would hold it too long. `need(lender)`: undefined while the lender is quiet; else
 * how far its demand (in use and waiting) rose above what it holds now within its
 * maximum wait, less the calls due to end within its short-call time (the scheduler's
 * count). A lender keeps its headroom from calls longer than its short-call time, and
 * that need on top from calls longer than its whole maximum wait. The gate applies
 * the keep to the counts as it decides and, on a small pool, lends a keep of just the
 * headroom while `RELEASES_NEAR` calls of any dispatcher end within the lender's
 * short-call time: a dispatcher sees only its own calls and its last answer.
 */
export function borrowSpec(
  gate: ModelGate,
  tier: string,
  callMs: number | undefined,
  need: (tier: string) => number | undefined,
): GateSpec {
  if (callMs === undefined) return gate.open;
  let changed = false;
  let near = false;
  const tiers: Record<string, TierShare> = {};
  const { keep: headroom, lentWhileNear, fromOutwaitable } = gate.headroom;
  for (const [name, share] of Object.entries(gate.open.tiers)) {
    const shortMs = gate.shortCallMs.get(name) ?? Infinity;
    const outwaits = callMs > (gate.maxWaitMs.get(name) ?? Infinity);
    const kept = name !== tier && callMs > shortMs && (outwaits || fromOutwaitable);
    const needed = kept ? need(name) : undefined;
    if (needed === undefined) {
      tiers[name] = share;
      continue;
    }
    const keep = outwaits ? needed + headroom : headroom;
    const lent = lentWhileNear && keep === headroom;
    tiers[name] = { ...share, keep, ...(lent ? { keepUnlessEndsWithinMs: shortMs } : {}) };
    changed = true;
    near ||= lent;
  }
  if (!changed) return gate.open;
  return { capacity: gate.open.capacity, tiers, ...(near ? { releasesNear: RELEASES_NEAR } : {}) };
}

/** `spec` with `tier`'s reservation set aside: what it may take as a pure borrower (tier-order.ts, yielding). */
export function asBorrower(spec: GateSpec, tier: string): GateSpec {
  if (!Object.hasOwn(spec.tiers, tier)) return spec;
  return { ...spec, tiers: { ...spec.tiers, [tier]: { reserved: 0, lendable: 0 } } };
}
