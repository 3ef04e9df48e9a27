/**
 * The per-model capacity gate: C slots, each tier owning a reserved part and lending
 * some of its idle part to others (borrowing as in Kubernetes API Priority and
 * Fairness). A tier always gets a slot within its reservation while the model has a
 * free slot; beyond it, only from the unreserved remainder and what idle tiers lend.
 * When a lender needs its slots back, new borrowing stops at once, so it waits at
 * most for the borrowed slots in flight to finish: one upstream service time.
 * The Lua twin is lib/store/redis/slot.ts.
 */

export interface TierShare {
  readonly reserved: number;
  readonly lendable: number;
}

export interface GateSpec {
  readonly capacity: number;
  readonly tiers: Readonly<Record<string, TierShare>>;
}

export function mayTakeSlot(spec: GateSpec, inUse: Readonly<Record<string, number>>, tier: string): boolean {
  let total = 0;
  let borrowed = 0;
  let reservedSum = 0;
  let lendOffer = 0;
  for (const [name, share] of Object.entries(spec.tiers)) {
    const used = inUse[name] ?? 0;
    reservedSum += share.reserved;
    borrowed += Math.max(0, used - share.reserved);
    if (name !== tier) lendOffer += Math.min(Math.max(0, share.reserved - used), share.lendable);
  }
  for (const [name, used] of Object.entries(inUse)) {
    total += used;
    // A tier missing from the spec owns nothing: everything it holds is borrowed.
    if (!(name in spec.tiers)) borrowed += used;
  }
  if (total >= spec.capacity) return false;
  const own = inUse[tier] ?? 0;
  const reserved = spec.tiers[tier]?.reserved ?? 0;
  if (own < reserved) return true;
  const unreserved = Math.max(0, spec.capacity - reservedSum);
  return borrowed + 1 <= unreserved + lendOffer;
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
