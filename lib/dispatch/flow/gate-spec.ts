/**
 * A model's slot split as the shared gate (lib/limits/capacity-gate.ts) reads it,
 * derived once per policy version, and what one request may borrow.
 *
 * Work-conserving: a tier's idle reserved slots are lent whole. Lending never
 * traps the lender: a lender that has asked for slots lately (its requests keep
 * coming) keeps `HEADROOM` of its idle slots back from calls expected to hold a
 * slot longer than a tenth of its maximum queue wait (the token estimate times
 * the model's observed speed), so its next request finds a slot at once instead
 * of waiting for a long borrowed call to end. Short calls, every call while the
 * lender is quiet, and every call while `RELEASES_NEAR` calls in flight are expected
 * to end within that tenth anyway (the lender's next request takes the first of
 * those slots, since releases go to the heavier tier first; the others cover
 * estimates that were short, or a second request), may take everything. On a few
 * slots with long calls the headroom is what keeps realtime's wait short; on many,
 * releases are always near and the headroom would only idle a slot.
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
}

const cache = new WeakMap<Policy, Map<string, ModelGate>>();

/** The part of a lender's maximum queue wait a borrowed call may last and still take its last idle slots. */
const SHORT_CALL_SHARE_OF_WAIT = 0.1;
/** Idle reserved slots an active lender keeps back from long borrowed calls. */
export const HEADROOM = 1;
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
  gate = { open, weights, shortCallMs, maxWaitMs, heavier };
  byModel.set(key, gate);
  return gate;
}

/**
 * What a call of `tier`, expected to hold its slot `callMs` (undefined: not known
 * yet), may borrow: everything, except the headroom of active lenders it would
 * hold too long. The gate applies the headroom (`keep`) to the counts as it decides
 * and lends it too while `RELEASES_NEAR` calls of any dispatcher end within the
 * lender's short-call time: a dispatcher sees only its own calls and its last answer.
 */
export function borrowSpec(
  gate: ModelGate,
  tier: string,
  callMs: number | undefined,
  active: (tier: string) => boolean,
): GateSpec {
  if (callMs === undefined) return gate.open;
  let changed = false;
  const tiers: Record<string, TierShare> = {};
  for (const [name, share] of Object.entries(gate.open.tiers)) {
    const shortMs = gate.shortCallMs.get(name) ?? Infinity;
    const keep = name !== tier && active(name) && callMs > shortMs;
    tiers[name] = keep ? { ...share, keep: HEADROOM, keepUnlessEndsWithinMs: shortMs } : share;
    changed ||= keep;
  }
  return changed ? { capacity: gate.open.capacity, tiers, releasesNear: RELEASES_NEAR } : gate.open;
}

/** `spec` with `tier`'s reservation set aside: what it may take as a pure borrower (tier-order.ts, yielding). */
export function asBorrower(spec: GateSpec, tier: string): GateSpec {
  if (!Object.hasOwn(spec.tiers, tier)) return spec;
  return { ...spec, tiers: { ...spec.tiers, [tier]: { reserved: 0, lendable: 0 } } };
}
