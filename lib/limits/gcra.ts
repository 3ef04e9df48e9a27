/**
 * GCRA (generic cell rate algorithm): the leaky bucket and the token bucket in one
 * number of state, the theoretical arrival time (TAT). Emission interval
 * T = 1000 / rate ms; tolerance tau = (burst - 1) * T. burst = 1 is the first
 * seed's strict leaky bucket; burst 50 at 10/s is the second seed's token bucket.
 * The Lua twin is lib/store/redis/pace.ts.
 */

export interface PaceSpec {
  /** Releases per second. */
  readonly rate: number;
  /** Releases allowed back to back after an idle spell. */
  readonly burst: number;
}

export interface PaceDecision {
  /** 0 when the release may happen now; else ms until it may. */
  readonly waitMs: number;
  /** The state to store: advanced when released or reserved, unchanged when told to wait. */
  readonly tat: number | undefined;
  /** True when the slot `waitMs` from now was booked: the caller releases then without asking again. */
  readonly reserved: boolean;
}

export function emissionIntervalMs(spec: PaceSpec): number {
  return 1000 / spec.rate;
}

/**
 * With `reserveUpToMs`, a wait no longer than that books the future slot (the TAT
 * advances as if released) and is returned with `reserved`: many messages of one
 * LiteTopic can then each wait for their own slot instead of all waking at the
 * next one and all but one going back to sleep.
 */
export function pace(spec: PaceSpec, tat: number | undefined, now: number, reserveUpToMs?: number): PaceDecision {
  const interval = emissionIntervalMs(spec);
  const tolerance = (Math.max(1, spec.burst) - 1) * interval;
  const base = tat === undefined ? now : Math.max(tat, now);
  const allowAt = base - tolerance;
  if (now >= allowAt) return { waitMs: 0, tat: base + interval, reserved: false };
  const waitMs = Math.ceil(allowAt - now);
  if (reserveUpToMs !== undefined && waitMs <= reserveUpToMs) return { waitMs, tat: base + interval, reserved: true };
  return { waitMs, tat, reserved: false };
}

/** A TAT at or before `now` carries no information; stores may drop it this long after `now` (reservations push it further). */
export function paceStateTtlMs(spec: PaceSpec, reserveUpToMs = 0): number {
  return Math.ceil(Math.max(1, spec.burst) * emissionIntervalMs(spec)) + reserveUpToMs + 1000;
}
