/**
 * A seeded pseudo-random generator (mulberry32): the same seed gives the same
 * trace on every machine, which is what makes a scenario deterministic.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer uniform in [min, max]. */
  int(min: number, max: number): number;
  /** Exponentially distributed gap with the given mean. */
  exp(mean: number): number;
  pick<T>(items: readonly T[]): T;
  /** An independent generator derived from this one and a label. */
  fork(label: string): Rng;
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    exp: (mean) => -Math.log(1 - next()) * mean,
    pick: (items) => items[Math.floor(next() * items.length)]!,
    fork: (label) => createRng((seed ^ hash(label)) >>> 0),
  };
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
