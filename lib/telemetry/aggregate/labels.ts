/**
 * Metric label cardinality decided once for the deployment: each period, the
 * busiest tenants in the aggregate are written to a capped hash, and every
 * process names exactly the tenants found there. Two processes deciding at once
 * may each add names; the hash's cap keeps the union to N, and all read the same
 * hash, so a tenant is named in every process or in none.
 */
import type { Clock } from '../../clock/clock.js';
import { OVERFLOW_FIELD, type AggregateOps } from '../../store/aggregate.js';
import { OTHER } from '../cardinality.js';
import { labelsKey, unpart } from './keys.js';
import { fields } from './keys.js';
import { tenantLoad } from './view.js';

export interface SharedLabelsOptions {
  readonly store: AggregateOps;
  readonly clock: Clock;
  readonly size: number;
  /** How long one decision holds. */
  readonly periodMs?: number;
}

export function createSharedLabels(options: SharedLabelsOptions) {
  const { store, clock, size } = options;
  const periodMs = options.periodMs ?? 30_000;
  let named = new Set<string>();
  let decidedFor = Number.NaN;

  /** Reads (or makes) the decision of the current period. */
  async function refresh(): Promise<readonly string[]> {
    const now = clock.now();
    const period = Math.floor(now / periodMs);
    const key = labelsKey(period);
    let [hash] = await store.readCounts([key]);
    if (!hash || hash.size === 0) {
      const load = await tenantLoad(store, now);
      const top = [...load]
        .map(([tenant, s]) => [tenant, s.admitted + s.refused] as const)
        .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
        .slice(0, size);
      // Scores keep the order; the cap (N names and the overflow) keeps a racing writer's extras out.
      const counts = top.map(([tenant], i) => [fields.label(tenant), size - i] as const);
      if (counts.length > 0) await store.addCounts([{ key, ttlMs: 2 * periodMs, maxFields: size + 1, counts }]);
      [hash] = await store.readCounts([key]);
    }
    named = new Set([...(hash ?? new Map()).keys()].filter((f) => f !== OVERFLOW_FIELD).map(unpart));
    decidedFor = period;
    return [...named];
  }

  return {
    refresh,
    /** The label for a tenant under the last decision read. */
    label: (tenant: string) => (named.has(tenant) ? tenant : OTHER),
    get period() {
      return decidedFor;
    },
  };
}
