/**
 * A model's slot split as the shared gate (lib/limits/capacity-gate.ts) reads it,
 * derived once per policy version. Two variants per model: a call expected to be
 * short may borrow every idle reserved slot (work-conserving: an idle share is
 * lent whole), while a long one borrows only the part each tier's `lendable`
 * allows. A lender then never waits on borrowed slots longer than one short
 * call, however long the borrowers' calls are elsewhere.
 */
import { gateFromShares, type GateSpec } from '../../limits/capacity-gate.js';
import type { Policy } from '../../policy/schema.js';
import type { TierWeight } from './tier-order.js';

export interface ModelGate {
  readonly short: GateSpec;
  readonly long: GateSpec;
  readonly weights: ReadonlyMap<string, TierWeight>;
  /** Calls expected to hold their slot longer than this borrow only the lendable part. */
  readonly shortCallMs: number;
}

const cache = new WeakMap<Policy, Map<string, ModelGate>>();

/** A lender waits for a short borrowed call at most this part of its tightest maximum queue wait. */
const SHORT_CALL_SHARE_OF_WAIT = 0.5;

export function modelGate(policy: Policy, model: string, slots: number): ModelGate {
  let byModel = cache.get(policy);
  if (!byModel) cache.set(policy, (byModel = new Map()));
  let gate = byModel.get(model);
  if (gate) return gate;
  const tiers = Object.entries(policy.tiers);
  const long = gateFromShares(slots, Object.fromEntries(tiers.map(([name, t]) => [name, { share: t.share, lendable: t.lendable }])));
  const short = gateFromShares(slots, Object.fromEntries(tiers.map(([name, t]) => [name, { share: t.share, lendable: 1 }])));
  const weights = new Map(tiers.map(([name, t]) => [name, { reserved: long.tiers[name]!.reserved, weight: t.weight }]));
  const lenders = tiers.filter(([name]) => long.tiers[name]!.reserved > 0).map(([, t]) => t.maxQueueWaitMs);
  const shortCallMs = SHORT_CALL_SHARE_OF_WAIT * (lenders.length ? Math.min(...lenders) : Infinity);
  gate = { short, long, weights, shortCallMs };
  byModel.set(model, gate);
  return gate;
}
