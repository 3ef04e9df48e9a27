/**
 * Fixed windows, aligned to the clock (a 60 s window starts on the minute), checked
 * before they are charged: a request either passes every window and is charged in
 * all of them, or is refused and charged in none. The Lua twin is
 * lib/store/redis/admit.ts; test/lib/limits/fixed-window.test.ts holds the cases.
 */

export interface WindowSpec {
  readonly limit: number;
  readonly windowMs: number;
  readonly cost: number;
}

/** What a store remembers for one window key. */
export interface WindowCounter {
  readonly windowStart: number;
  readonly count: number;
}

export interface WindowCheck {
  readonly windowStart: number;
  /** Count in the current window before this request. */
  readonly used: number;
  readonly fits: boolean;
  readonly resetMs: number;
}

export function alignedWindowStart(now: number, windowMs: number): number {
  return Math.floor(now / windowMs) * windowMs;
}

/** Evaluates one window without changing anything. A counter from an older window counts as empty. */
export function checkWindow(spec: WindowSpec, counter: WindowCounter | undefined, now: number): WindowCheck {
  const windowStart = alignedWindowStart(now, spec.windowMs);
  const used = counter && counter.windowStart === windowStart ? counter.count : 0;
  return {
    windowStart,
    used,
    fits: used + spec.cost <= spec.limit,
    resetMs: windowStart + spec.windowMs - now,
  };
}

export interface MultiWindowDecision {
  readonly allowed: boolean;
  readonly checks: readonly WindowCheck[];
  /** Index of the first window that refused, or -1. */
  readonly firstDenied: number;
  /** When refused: how long until every refusing window has reset. */
  readonly retryAfterMs: number;
}

/** Checks all windows; the caller charges them (counter + cost) only when allowed. */
export function checkWindows(
  specs: readonly WindowSpec[],
  counters: readonly (WindowCounter | undefined)[],
  now: number,
): MultiWindowDecision {
  const checks = specs.map((spec, i) => checkWindow(spec, counters[i], now));
  const firstDenied = checks.findIndex((c) => !c.fits);
  const retryAfterMs = checks.reduce((max, c) => (c.fits ? max : Math.max(max, c.resetMs)), 0);
  return { allowed: firstDenied < 0, checks, firstDenied, retryAfterMs };
}

/** The counter after charging `cost` in the checked window. */
export function charge(check: WindowCheck, cost: number): WindowCounter {
  return { windowStart: check.windowStart, count: check.used + cost };
}

/**
 * Applies a correction (actual minus estimated tokens) to the window it was charged
 * in. A window that has rolled over since is left alone: its successor must not
 * pay for an earlier request.
 */
export function reconcileWindow(
  counter: WindowCounter | undefined,
  chargedWindowStart: number,
  delta: number,
): WindowCounter | undefined {
  if (!counter || counter.windowStart !== chargedWindowStart) return counter;
  return { windowStart: counter.windowStart, count: Math.max(0, counter.count + delta) };
}
