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
 *
 * A request is back when its LiteTopic delivers again (a Suspend pauses the whole LiteTopic, the
 * message first), not when its Suspend was due to end: RocketMQ 5.5 resumed some paused
 * LiteTopics more than a minute late (`npm run bench -- seed2-burst --engine real`: returns late
 * by p50 71 ms, p99 78.8 s, in the receive probe). Forgotten at their due time, those were never
 * called back, and the room sat empty while they were away: the GPU idle for 8 % of the time
 * requests waited for a slot, with every one of them sent back.
 */
import type { Recall } from '../../queue/types.js';

interface Away {
  readonly tier: string;
  /** The physical LiteTopic it returns with: a delivery from it means its pause is over. */
  readonly liteTopic: string;
  /** Its flow within the tier (tenant and account), as the fair-share report counts flows. */
  readonly flow?: string;
  readonly deadline: number;
  /** When it comes back on its own. */
  readonly returnAt: number;
  readonly recall: Recall;
}

/** Due back within this many ms either way, a request is left to come back on its own. */
export const RECALL_WORTH_MS = 1_000;

/**
 * Past its due time, a request not back is called back for this long (then it is taken to have
 * come back to another dispatcher). Above the longest late return measured (79.5 s).
 */
export const LATE_KEPT_MS = 120_000;

/** Sent-back requests remembered at most; the oldest go first (they return first). */
export const MAX_AWAY = 10_000;

export class SentBack {
  private away: Away[] = [];

  add(request: Away): void {
    this.away.push(request);
    if (this.away.length > MAX_AWAY) this.away.shift();
  }

  /** Its LiteTopic delivered again: what was sent back from it is back. */
  back(liteTopic: string): void {
    if (this.away.some((a) => a.liteTopic === liteTopic))
      this.away = this.away.filter((a) => a.liteTopic !== liteTopic);
  }

  get size(): number {
    return this.away.length;
  }

  /** The flows of `tier` with a request away now: sent back, not back yet, not past its deadline. */
  flowsAway(tier: string, now: number): Set<string> {
    const flows = new Set<string>();
    for (const a of this.away)
      if (a.tier === tier && a.flow !== undefined && now - a.returnAt < LATE_KEPT_MS && a.deadline > now)
        flows.add(a.flow);
    return flows;
  }

  /**
   * Takes up to `n` requests to call back, heaviest tier first, then earliest deadline: those
   * due back later than RECALL_WORTH_MS from now, and those RECALL_WORTH_MS late or more (not on
   * their way); forgets those past their deadline or LATE_KEPT_MS late.
   */
  take(n: number, weightOf: (tier: string) => number, now: number): Recall[] {
    this.away = this.away.filter((a) => a.deadline > now && now - a.returnAt < LATE_KEPT_MS);
    if (n <= 0 || this.away.length === 0) return [];
    const worth = (a: Away) => Math.abs(a.returnAt - now) >= RECALL_WORTH_MS;
    const order = this.away
      .filter(worth)
      .sort((a, b) => weightOf(b.tier) - weightOf(a.tier) || a.deadline - b.deadline);
    const chosen = new Set(order.slice(0, n));
    this.away = this.away.filter((a) => !chosen.has(a));
    return [...chosen].map((a) => a.recall);
  }
}
