/**
 * Bounded label values: the N busiest tenants are named in metric labels, every
 * other tenant is counted under "other". A metrics backend then holds at most N+1
 * series per tenant-labelled metric and label set, however many tenants call.
 *
 * Busy = an exponentially decayed count of events (half-life `halfLifeMs`), so a
 * tenant that bursts now is named now and one that went quiet gives its place up.
 * Free places are handed out at once; once all N are taken, the named set is
 * recomputed at most every `refreshMs`, and a newcomer displaces the weakest named
 * tenant only when it is busier by `hysteresis`, so names do not flap.
 * The score table itself is bounded (`maxTracked`): the quietest are forgotten.
 */
import type { Clock } from '../clock/clock.js';

export const OTHER = 'other';

export interface TopNOptions {
  readonly clock: Clock;
  /** Names kept in labels. */
  readonly size: number;
  readonly halfLifeMs?: number;
  readonly refreshMs?: number;
  readonly hysteresis?: number;
  readonly maxTracked?: number;
}

interface Score {
  value: number;
  at: number;
}

export class TopNLabels {
  private readonly clock: Clock;
  private readonly size: number;
  private readonly halfLifeMs: number;
  private readonly refreshMs: number;
  private readonly hysteresis: number;
  private readonly maxTracked: number;
  private readonly scores = new Map<string, Score>();
  private readonly named = new Set<string>();
  private lastRefresh = Number.NEGATIVE_INFINITY;

  constructor(options: TopNOptions) {
    this.clock = options.clock;
    this.size = Math.max(0, Math.floor(options.size));
    this.halfLifeMs = options.halfLifeMs ?? 60_000;
    this.refreshMs = options.refreshMs ?? 5_000;
    this.hysteresis = options.hysteresis ?? 1.5;
    this.maxTracked = Math.max(this.size * 4, options.maxTracked ?? 10_000);
  }

  /** Counts `weight` events for `value` and returns the label to use for it. */
  touch(value: string, weight = 1): string {
    const now = this.clock.now();
    const s = this.scores.get(value);
    if (s) {
      s.value = this.decayed(s, now) + weight;
      s.at = now;
    } else {
      this.scores.set(value, { value: weight, at: now });
      if (this.scores.size > this.maxTracked) this.forgetQuietest(now);
    }
    if (!this.named.has(value) && this.named.size < this.size) this.named.add(value);
    if (now - this.lastRefresh >= this.refreshMs) this.refresh(now);
    return this.label(value);
  }

  /** The label for `value` without counting anything. */
  label(value: string): string {
    return this.named.has(value) ? value : OTHER;
  }

  /** The named values, busiest first. */
  names(): string[] {
    const now = this.clock.now();
    return [...this.named].sort((a, b) => this.scoreOf(b, now) - this.scoreOf(a, now));
  }

  private scoreOf(value: string, now: number): number {
    const s = this.scores.get(value);
    return s ? this.decayed(s, now) : 0;
  }

  private decayed(s: Score, now: number): number {
    return s.value * 0.5 ** (Math.max(0, now - s.at) / this.halfLifeMs);
  }

  private refresh(now: number): void {
    this.lastRefresh = now;
    if (this.size === 0) return;
    const ranked = [...this.scores.keys()].map((k) => [k, this.scoreOf(k, now)] as const).sort((a, b) => b[1] - a[1]);
    for (const [candidate, score] of ranked.slice(0, this.size)) {
      if (this.named.has(candidate)) continue;
      if (this.named.size < this.size) {
        this.named.add(candidate);
        continue;
      }
      let weakest: string | undefined;
      let weakestScore = Number.POSITIVE_INFINITY;
      for (const n of this.named) {
        const ns = this.scoreOf(n, now);
        if (ns < weakestScore) {
          weakest = n;
          weakestScore = ns;
        }
      }
      if (weakest !== undefined && score > weakestScore * this.hysteresis) {
        this.named.delete(weakest);
        this.named.add(candidate);
      }
    }
  }

  private forgetQuietest(now: number): void {
    const ranked = [...this.scores.entries()]
      .filter(([k]) => !this.named.has(k))
      .sort((a, b) => this.decayed(a[1], now) - this.decayed(b[1], now));
    const drop = Math.max(1, Math.floor(ranked.length / 2));
    for (const [k] of ranked.slice(0, drop)) this.scores.delete(k);
  }
}
