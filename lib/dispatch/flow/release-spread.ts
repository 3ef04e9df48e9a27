/**
 * Which of several equally due calls to start: the one whose expected end
 * spreads the model's releases best.
 *
 * When every slot is busy, a request of a heavier tier waits for the next
 * release (a lender's headroom is lent when releases are near, gate-spec.ts).
 * Calls of different lengths started at the moments slots free up end in
 * clumps with long gaps between them, and a request arriving in a long gap
 * waits through what is left of it: for arrivals at random moments that is,
 * on average, the sum of the squared gaps over twice their span. So among the
 * calls fairness lets go next (fair-queue.ts), the one that lowers that figure
 * most goes first: a call ending in the widest gap rather than beside an end
 * already due. Measured with `npm run bench -- seed2-burst` (realtime's wait
 * tail), not assumed.
 */

/**
 * Mean wait from a random moment until the next expected end, once a call
 * expected to hold its slot `callMs` has started: lower spreads better.
 * `endsFromNow`: the calls in flight, ms from now until each is expected to end,
 * ascending (the scheduler sorts them once per pick, not once per candidate).
 */
export function waitForRelease(endsFromNow: readonly number[], callMs: number): number {
  let prev = 0;
  let squares = 0;
  let placed = false;
  const gap = (at: number) => {
    squares += (at - prev) ** 2;
    prev = at;
  };
  for (const end of endsFromNow) {
    if (!(end > 0) || !Number.isFinite(end)) continue;
    if (!placed && callMs < end) {
      gap(callMs);
      placed = true;
    }
    gap(Math.max(prev, end));
  }
  if (!placed) gap(Math.max(prev, callMs));
  return prev > 0 ? squares / (2 * prev) : 0;
}
