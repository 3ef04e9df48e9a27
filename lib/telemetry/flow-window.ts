/**
 * What the edge and the dispatchers saw lately, in time buckets: requests offered per
 * tenant and account over the burst window ("bursting now"), and per-tier outcomes over
 * the history the dashboard charts. Buckets are aligned to the clock, so every process
 * steps them alike; keys per bucket are capped, the rest fold into "other".
 */
import type { Clock } from '../clock/clock.js';
import { OTHER } from './cardinality.js';

export const HISTORY_SERIES = ['admitted', 'refused', 'absorbed', 'completed', 'expired', 'failed'] as const;
export type HistorySeries = (typeof HISTORY_SERIES)[number];
export type TierPoint = Record<HistorySeries, number>;

export interface Offered {
  admitted: number;
  refused: number;
  warned: number;
}

export interface AccountOffered extends Offered {
  readonly tenant: string;
  readonly tier: string;
}

export interface OfferedBy {
  readonly tenant: string;
  readonly account: string;
  readonly tier: string;
}

export interface FlowWindowOptions {
  readonly clock: Clock;
  /** Window over which "bursting now" is summed. */
  readonly burstWindowMs: number;
  /** How far back the per-tier history goes, and its step. */
  readonly historyMs: number;
  readonly bucketMs: number;
}

/** The history as the dashboard charts it: one point per step, oldest first. */
export interface HistoryView {
  readonly start: number;
  readonly stepMs: number;
  readonly tiers: Record<string, Record<HistorySeries, number[]>>;
}

interface BurstBucket {
  readonly start: number;
  readonly tenants: Map<string, Offered>;
  readonly accounts: Map<string, AccountOffered>;
}

interface HistoryBucket {
  readonly start: number;
  readonly tiers: Map<string, TierPoint>;
}

const MAX_BUCKET_KEYS = 10_000;

export const noneOffered = (): Offered => ({ admitted: 0, refused: 0, warned: 0 });

/** Zeros for each history series, `steps` long. */
export function emptySeries(steps: number): Record<HistorySeries, number[]> {
  return Object.fromEntries(HISTORY_SERIES.map((s) => [s, new Array<number>(steps).fill(0)])) as Record<
    HistorySeries,
    number[]
  >;
}

export class FlowWindow {
  private readonly burst: BurstBucket[] = [];
  private readonly history: HistoryBucket[] = [];

  constructor(private readonly opts: FlowWindowOptions) {}

  /** One admission decision of `by`, counted under `field`. */
  offered(by: OfferedBy, field: keyof Offered): void {
    const b = this.bucket(
      this.burst,
      (start) => ({ start, tenants: new Map(), accounts: new Map() }),
      this.opts.burstWindowMs,
    );
    const tenantKey = b.tenants.has(by.tenant) || b.tenants.size < MAX_BUCKET_KEYS ? by.tenant : OTHER;
    const t = b.tenants.get(tenantKey) ?? noneOffered();
    t[field]++;
    b.tenants.set(tenantKey, t);
    const accountKey = b.accounts.has(by.account) || b.accounts.size < MAX_BUCKET_KEYS ? by.account : OTHER;
    const a = b.accounts.get(accountKey) ?? { tenant: by.tenant, tier: by.tier, ...noneOffered() };
    a[field]++;
    b.accounts.set(accountKey, a);
  }

  /** Counts one outcome of `tier` in the current history step. */
  outcome(tier: string, series: HistorySeries): void {
    const b = this.bucket(this.history, (start) => ({ start, tiers: new Map() }), this.opts.historyMs);
    let p = b.tiers.get(tier);
    if (!p) b.tiers.set(tier, (p = { admitted: 0, refused: 0, absorbed: 0, completed: 0, expired: 0, failed: 0 }));
    p[series]++;
  }

  /** What each tenant and account offered within the burst window. */
  offeredLately(): { readonly tenants: Map<string, Offered>; readonly accounts: Map<string, AccountOffered> } {
    const cutoff = this.opts.clock.now() - this.opts.burstWindowMs;
    const tenants = new Map<string, Offered>();
    const accounts = new Map<string, AccountOffered>();
    for (const b of this.burst) {
      if (b.start <= cutoff) continue;
      for (const [k, v] of b.tenants) {
        const s = tenants.get(k) ?? noneOffered();
        addOffered(s, v);
        tenants.set(k, s);
      }
      for (const [k, v] of b.accounts) {
        const s = accounts.get(k) ?? { tenant: v.tenant, tier: v.tier, ...noneOffered() };
        addOffered(s, v);
        accounts.set(k, s);
      }
    }
    return { tenants, accounts };
  }

  /** The history, zeros where nothing happened; `tiers` always have a series, seen or not. */
  historyView(tiers: Iterable<string>): HistoryView {
    const { bucketMs, historyMs } = this.opts;
    const end = Math.floor(this.opts.clock.now() / bucketMs) * bucketMs;
    const steps = Math.max(1, Math.round(historyMs / bucketMs));
    const start = end - (steps - 1) * bucketMs;
    const names = new Set(tiers);
    for (const b of this.history) for (const t of b.tiers.keys()) names.add(t);
    // Tier names come from events: a record without a prototype keeps any of them an own entry.
    const series = Object.create(null) as Record<string, Record<HistorySeries, number[]>>;
    for (const tier of names) series[tier] = emptySeries(steps);
    for (const b of this.history) {
      const i = Math.round((b.start - start) / bucketMs);
      if (i < 0 || i >= steps) continue;
      for (const [tier, p] of b.tiers) for (const s of HISTORY_SERIES) series[tier]![s][i] = p[s];
    }
    return { start, stepMs: bucketMs, tiers: series };
  }

  private bucket<T extends { start: number }>(list: T[], make: (start: number) => T, keepMs: number): T {
    const start = Math.floor(this.opts.clock.now() / this.opts.bucketMs) * this.opts.bucketMs;
    const last = list[list.length - 1];
    if (last && last.start === start) return last;
    const b = make(start);
    list.push(b);
    while (list.length > 0 && list[0]!.start <= start - keepMs) list.shift();
    return b;
  }
}

function addOffered(sum: Offered, more: Offered): void {
  sum.admitted += more.admitted;
  sum.refused += more.refused;
  sum.warned += more.warned;
}
