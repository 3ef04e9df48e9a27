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
  /** The state to store: advanced when released, unchanged when told to wait. */
  readonly tat: number | undefined;
}

export function emissionIntervalMs(spec: PaceSpec): number {
  return 1000 / spec.rate;
}

export function pace(spec: PaceSpec, tat: number | undefined, now: number): PaceDecision {
  const interval = emissionIntervalMs(spec);
  const tolerance = (Math.max(1, spec.burst) - 1) * interval;
  const base = tat === undefined ? now : Math.max(tat, now);
  const allowAt = base - tolerance;
  if (now < allowAt) return { waitMs: Math.ceil(allowAt - now), tat };
  return { waitMs: 0, tat: base + interval };
}

/** A TAT at or before `now` carries no information; stores may drop it after this long. */
export function paceStateTtlMs(spec: PaceSpec): number {
  return Math.ceil(Math.max(1, spec.burst) * emissionIntervalMs(spec)) + 1000;
}
