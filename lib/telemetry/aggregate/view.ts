/**
 * The dashboard's view of the whole deployment, read from the aggregate: who is
 * bursting (summed over every edge), LiteTopic depth, per-tier history, GPU
 * slots (summed over every dispatcher), alerts of every instance, and each
 * instance with when it last read its policy. Any instance serves the same view.
 */
import type { Clock } from '../../clock/clock.js';
import type { Policy } from '../../policy/schema.js';
import { own } from '../../lookup.js';
import { OVERFLOW_FIELD, type AggregateOps } from '../../store/aggregate.js';
import type { AlertRecord } from '../alerts.js';
import { gpuRows } from '../gpu-view.js';
import { noneOffered as zero, type AccountOffered, type Offered } from '../flow-window.js';
import {
  bookingsOf,
  deepestLiteTopics,
  emptySeries,
  flowRows,
  HISTORY_SERIES,
  pausedIds,
  type HistorySeries,
  type LiveState,
  type LiteTopicRow,
} from '../live-state.js';
import { DEPTH_KEY, flowKey, historyKey, INSTANCES_KEY, parts } from './keys.js';
import { AGGREGATE, type InstanceRecord } from './layout.js';

export interface InstanceRow {
  readonly instance: string;
  readonly role: string;
  readonly lastSeenMs: number;
  readonly policyCheckedAt?: number;
  readonly policyAgeMs?: number;
  readonly policyDigest?: string;
}

export interface DeploymentState extends LiveState {
  readonly scope: 'deployment';
  readonly instances: readonly InstanceRow[];
}

export interface DeploymentViewOptions {
  readonly store: AggregateOps;
  readonly clock: Clock;
  readonly policy: () => Policy;
}

const isStat = (s: string | undefined): s is keyof Offered => s === 'admitted' || s === 'refused' || s === 'warned';

/** Tenants by offered load over the window, busiest first, read from the flow buckets. */
export async function tenantLoad(store: AggregateOps, now: number): Promise<Map<string, Offered>> {
  const flows = await store.readCounts(flowBuckets(now));
  const tenants = new Map<string, Offered>();
  for (const hash of flows) {
    for (const [field, n] of hash) {
      const p = parts(field);
      if (p[0] !== 't' || !isStat(p[2])) continue;
      const row = tenants.get(p[1]!) ?? zero();
      row[p[2]] += n;
      tenants.set(p[1]!, row);
    }
  }
  return tenants;
}

function flowBuckets(now: number): string[] {
  const last = Math.floor(now / AGGREGATE.bucketMs) * AGGREGATE.bucketMs;
  const n = Math.round(AGGREGATE.windowMs / AGGREGATE.bucketMs);
  return Array.from({ length: n }, (_, i) => flowKey(last - i * AGGREGATE.bucketMs));
}

function parseInstance(value: string): InstanceRecord | undefined {
  try {
    const r = JSON.parse(value) as InstanceRecord;
    return r && typeof r === 'object' && typeof r.instance === 'string' && typeof r.at === 'number' ? r : undefined;
  } catch {
    return undefined;
  }
}

export function createDeploymentView(options: DeploymentViewOptions) {
  const { store, clock } = options;

  async function live(limit = 10): Promise<DeploymentState> {
    const now = clock.now();
    const policy = options.policy();
    const end = Math.floor(now / AGGREGATE.bucketMs) * AGGREGATE.bucketMs;
    const steps = Math.round(AGGREGATE.historyMs / AGGREGATE.bucketMs);
    const start = end - (steps - 1) * AGGREGATE.bucketMs;
    const minutes: number[] = [];
    for (let m = Math.floor(start / 60_000) * 60_000; m <= end; m += 60_000) minutes.push(m);
    const flowKeys = flowBuckets(now);
    const [hashes, members] = await Promise.all([
      store.readCounts([...flowKeys, DEPTH_KEY, ...minutes.map(historyKey)]),
      store.readMembers(INSTANCES_KEY, AGGREGATE.instanceTtlMs),
    ]);
    const flows = hashes.slice(0, flowKeys.length);
    const depthHash = hashes[flowKeys.length]!;
    const historyHashes = hashes.slice(flowKeys.length + 1);

    const tenants = new Map<string, Offered>();
    const accounts = new Map<string, AccountOffered>();
    for (const hash of flows) {
      for (const [field, n] of hash) {
        if (field === OVERFLOW_FIELD) continue;
        const p = parts(field);
        if (p[0] === 't' && isStat(p[2])) {
          const row = tenants.get(p[1]!) ?? zero();
          row[p[2]] += n;
          tenants.set(p[1]!, row);
        } else if (p[0] === 'a' && isStat(p[4])) {
          const row = accounts.get(p[1]!) ?? { ...zero(), tenant: p[2]!, tier: p[3]! };
          row[p[4]] += n;
          accounts.set(p[1]!, row);
        }
      }
    }

    const queuedByTenant = new Map<string, number>();
    const liteTopics: LiteTopicRow[] = [];
    for (const [field, depth] of depthHash) {
      if (field === OVERFLOW_FIELD || depth <= 0) continue;
      const [liteTopic, tier, tenant, model] = parts(field) as [string, string, string, string];
      queuedByTenant.set(tenant, (queuedByTenant.get(tenant) ?? 0) + depth);
      const tierPolicy = own(policy.tiers, tier);
      liteTopics.push({ liteTopic, tier, tenant, model, depth, maxQueueWaitMs: tierPolicy?.maxQueueWaitMs });
    }
    const rows = flowRows({ policy, windowMs: AGGREGATE.windowMs, tenants, accounts, queuedByTenant, limit });

    // Tier and series names are read from the store's fields: records without a prototype keep each an own entry.
    const series = Object.create(null) as Record<string, Record<HistorySeries, number[]>>;
    const totals = Object.create(null) as Record<string, number>;
    const seriesOf = (tier: string) => (series[tier] ??= emptySeries(steps));
    for (const t of Object.keys(policy.tiers)) seriesOf(t);
    historyHashes.forEach((hash, m) => {
      for (const [field, n] of hash) {
        const [tier, name, second] = parts(field);
        if (tier === undefined || name === undefined || field === OVERFLOW_FIELD) continue;
        const at = minutes[m]! + Number(second) * AGGREGATE.bucketMs;
        const i = Math.round((at - start) / AGGREGATE.bucketMs);
        if (!Number.isInteger(i) || i < 0 || i >= steps) continue;
        totals[name] = (totals[name] ?? 0) + n;
        if ((HISTORY_SERIES as readonly string[]).includes(name)) seriesOf(tier)[name as HistorySeries][i] = n;
      }
    });

    const records = members.map((m) => parseInstance(m.value)).filter((r): r is InstanceRecord => r !== undefined);
    const slots = new Map<string, Map<string, number>>();
    const pace = new Map<string, number>();
    const alerts: AlertRecord[] = [];
    for (const r of records) {
      for (const [model, tiers] of Object.entries(r.slots ?? {})) {
        const m = slots.get(model) ?? new Map<string, number>();
        for (const [tier, n] of Object.entries(tiers)) m.set(tier, (m.get(tier) ?? 0) + n);
        slots.set(model, m);
      }
      for (const [model, f] of Object.entries(r.pace ?? {})) pace.set(model, Math.min(pace.get(model) ?? 1, f));
      for (const a of r.alerts ?? []) alerts.push({ ...a, fields: {}, alert: a.alert as AlertRecord['alert'] });
    }
    alerts.sort((a, b) => b.at - a.at);
    const gpu = gpuRows(policy, slots, pace);

    return {
      scope: 'deployment',
      now,
      burstWindowMs: AGGREGATE.windowMs,
      tenants: rows.tenants,
      accounts: rows.accounts,
      liteTopics: deepestLiteTopics(liteTopics, limit),
      history: { start, stepMs: AGGREGATE.bucketMs, tiers: series },
      gpu,
      totals,
      paused: pausedIds(policy),
      bookings: bookingsOf(policy, now),
      warnings: [],
      alerts: alerts.slice(0, 20),
      activeAlerts: alerts.filter((a) => now - a.at < 5 * 60_000).slice(0, 20),
      instances: records.map((r) => ({
        instance: r.instance,
        role: r.role,
        lastSeenMs: Math.max(0, now - r.at),
        policyCheckedAt: r.policyCheckedAt,
        policyAgeMs: r.policyCheckedAt === undefined ? undefined : Math.max(0, now - r.policyCheckedAt),
        policyDigest: r.policyDigest,
      })),
    };
  }

  return { live };
}
