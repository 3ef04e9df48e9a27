/**
 * Which tier asks the shared gate for the next free slot. Tiers below their
 * reservation first (their share is guaranteed), heavier first; then the rest in
 * proportion to their weights: the tier holding the fewest slots beyond its
 * reservation per unit of weight goes next, so capacity nobody reserved, or that
 * an idle tier lends, is split by weight among the tiers that want it.
 */

export interface TierWeight {
  readonly reserved: number;
  readonly weight: number;
}

export function tierOrder(
  waiting: readonly string[],
  spec: ReadonlyMap<string, TierWeight>,
  inUse: Readonly<Record<string, number>>,
): string[] {
  const key = (tier: string) => {
    const s = spec.get(tier);
    const used = Object.hasOwn(inUse, tier) ? inUse[tier]! : 0;
    const weight = s?.weight ?? 1;
    const reserved = s?.reserved ?? 0;
    return { below: used < reserved, borrowed: (used - reserved + 1) / weight, weight };
  };
  const keyed = waiting.map((tier) => ({ tier, ...key(tier) }));
  keyed.sort((a, b) => {
    if (a.below !== b.below) return a.below ? -1 : 1;
    if (a.below) return b.weight - a.weight || (a.tier < b.tier ? -1 : 1);
    return a.borrowed - b.borrowed || b.weight - a.weight || (a.tier < b.tier ? -1 : 1);
  });
  return keyed.map((k) => k.tier);
}
