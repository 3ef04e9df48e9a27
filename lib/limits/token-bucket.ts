/**
 * A plain token bucket, kept as the reference GCRA is proven equal to
 * (test/lib/limits/gcra.test.ts). Credit is counted in milliseconds of refill so
 * the comparison is exact in integers.
 */
export interface TokenBucketState {
  readonly creditMs: number;
  readonly at: number;
}

export function tokenBucketTake(
  intervalMs: number,
  burst: number,
  state: TokenBucketState | undefined,
  now: number,
): { allowed: boolean; state: TokenBucketState } {
  const capacity = burst * intervalMs;
  const credit = state ? Math.min(capacity, state.creditMs + (now - state.at)) : capacity;
  if (credit >= intervalMs) return { allowed: true, state: { creditMs: credit - intervalMs, at: now } };
  return { allowed: false, state: { creditMs: credit, at: now } };
}
