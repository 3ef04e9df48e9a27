/**
 * Requests this dispatcher sent back from a full room, until they return: the ones to call
 * back early when the room empties while they are away.
 *
 * A send-back lasts as long as the room is expected to stay full (the scheduler's sendBack).
 * When the heavier tiers' demand ends sooner, the slots free all at once and nothing is here
 * to take them: after the batch flood of test/bench/many-slots.test.ts (64 slots, seed 2) the
 * GPU ran at about a sixth of its slots for half a minute while the offline requests sat out
 * their Suspends (GPU busy while requests waited: 93.8 %). The engine tells the
 * dispatcher how to end a Suspend early (lib/queue/types.ts `Recall`); this list says whom
 * to call back first: the heavier tier, then the earlier deadline.
 */
import type { Recall } from '../../queue/types.js';

interface Away {
  readonly tier: string;
  /** Its flow within the tier (tenant and account), as the fair-share report counts flows. */
  readonly flow?: string;
  readonly deadline: number;
  /** When it comes back on its own. */
  readonly returnAt: number;
  readonly recall: Recall;
}

/** Away fewer ms than this, a request is left to come back on its own. */
export const RECALL_WORTH_MS = 1_000;

/** Sent-back requests remembered at most; the oldest go first (they return first). */
export const MAX_AWAY = 10_000;

export class SentBack {
  private away: Away[] = [];

  add(request: Away): void {
    this.away.push(request);
    if (this.away.length > MAX_AWAY) this.away.shift();
  }

  get size(): number {
    return this.away.length;
  }

  /** The flows of `tier` with a request away now: sent back, not yet due back, not past its deadline. */
  flowsAway(tier: string, now: number): Set<string> {
    const flows = new Set<string>();
    for (const a of this.away)
      if (a.tier === tier && a.flow !== undefined && a.returnAt > now && a.deadline > now) flows.add(a.flow);
    return flows;
  }

  /**
   * Takes up to `n` requests to call back, heaviest tier first, then earliest deadline;
   * forgets those that are back (or nearly) or past their deadline.
   */
  take(n: number, weightOf: (tier: string) => number, now: number): Recall[] {
    this.away = this.away.filter((a) => a.returnAt - now >= RECALL_WORTH_MS && a.deadline > now);
    if (n <= 0 || this.away.length === 0) return [];
    const order = [...this.away].sort((a, b) => weightOf(b.tier) - weightOf(a.tier) || a.deadline - b.deadline);
    const chosen = new Set(order.slice(0, n));
    this.away = this.away.filter((a) => !chosen.has(a));
    return [...chosen].map((a) => a.recall);
  }
}
