/**
 * Which tier asks the shared gate for the next free slot. Tiers below their
 * reservation first (their share is guaranteed), heavier first; then the rest in
 * proportion to their weights: the tier holding the fewest slots beyond its
 * reservation per unit of weight goes next, so capacity nobody reserved, or that
 * an idle tier lends, is split by weight among the tiers that want it.
 *
 * Slack: a tier whose waiting work is not pressed (none of it has used up its
 * slack, see `pressed`) yields to every heavier tier that waits, its reservation
 * included, and asks only after them. Its requests can still start in time
 * later, while the heavier tier's, due sooner, would expire: so under overload
 * success follows the tiers' order instead of their maximum waits (a light tier
 * that may wait an hour no longer keeps slots from a heavier one that may wait
 * minutes). Once its oldest work is pressed, its reservation and weight count
 * again, so it never starves. A yielding tier asks as a borrower (its own
 * reservation set aside, gate-spec.ts `asBorrower`): a slot the heavier tiers
 * cannot take because nobody may lend it to them (an active lender's headroom)
 * stays with its lender; any other slot they leave still goes to it.
 *
 * A dispatcher sees only its own waiters, so a tier with slack also yields to heavier
 * tiers waiting in other dispatchers: it names them in its ask (`yieldTo`), and the
 * shared gate, which holds every dispatcher's claims, keeps a slot for such a tier's
 * claimant when it could take it (lib/limits/capacity-gate.ts, takeSlot). Without it,
 * with two dispatchers, offline started on one while batch waited on the other, and
 * batch requests expired while offline was all served (`mixed-overload --dispatchers 2`).
 */

export interface TierWeight {
  readonly reserved: number;
  readonly weight: number;
}

export interface TierTurn {
  readonly tier: string;
  /** It yields to a heavier waiting tier: it asks last, as a borrower. */
  readonly yields: boolean;
}

export function tierOrder(
  waiting: readonly string[],
  spec: ReadonlyMap<string, TierWeight>,
  inUse: Readonly<Record<string, number>>,
  pressed: (tier: string) => boolean = () => true,
): TierTurn[] {
  const weightOf = (tier: string) => spec.get(tier)?.weight ?? 1;
  const heaviest = Math.max(-Infinity, ...waiting.map(weightOf));
  const key = (tier: string) => {
    const s = spec.get(tier);
    const used = Object.hasOwn(inUse, tier) ? inUse[tier]! : 0;
    const weight = weightOf(tier);
    const reserved = s?.reserved ?? 0;
    const yields = weight < heaviest && !pressed(tier);
    return { yields, below: used < reserved, borrowed: (used - reserved + 1) / weight, weight };
  };
  const keyed = waiting.map((tier) => ({ tier, ...key(tier) }));
  keyed.sort((a, b) => {
    if (a.yields !== b.yields) return a.yields ? 1 : -1;
    if (a.yields) return b.weight - a.weight || (a.tier < b.tier ? -1 : 1);
    if (a.below !== b.below) return a.below ? -1 : 1;
    if (a.below) return b.weight - a.weight || (a.tier < b.tier ? -1 : 1);
    return a.borrowed - b.borrowed || b.weight - a.weight || (a.tier < b.tier ? -1 : 1);
  });
  return keyed.map((k) => ({ tier: k.tier, yields: k.yields }));
}

/**
 * Work is pressed once its slack (time left before its deadline) is down to this
 * part of its tier's maximum wait. A half: work deferred for the first half of
 * its wait, arriving no faster than its tier's reservation serves it, still
 * drains within the second half once its reservation counts again.
 */
export const PRESSED_SHARE_OF_WAIT = 0.5;
