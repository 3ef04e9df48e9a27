/**
 * Who got what, as tables: per tier (success, goodput, Jain over tenants), per tenant, the
 * accounts Sluice served worst and those that waited longest, each beside every baseline.
 * Shared by the scenarios whose traffic has several tenants per tier (mixed-overload, replay).
 */
import { BASELINES, SYSTEM_LABELS } from './baselines.js';
import type { RunComparison, SystemReport } from './compare.js';
import { outcomes, tierFairness, type RequestOutcome, type TierFairness } from './fairness.js';
import type { SystemName, SystemRun } from './systems.js';
import type { TraceEvent } from './trace.js';
import { ms, pct } from './versus.js';
import type { Table } from '../scenarios/types.js';

export interface SystemFairness {
  readonly name: SystemName;
  readonly label: string;
  readonly report: SystemReport;
  /** Per tier. */
  readonly fairness: Readonly<Record<string, TierFairness>>;
  /** Per model, then tier: requests, and the shares served and served in time. */
  readonly models: ReadonlyMap<string, ReadonlyMap<string, { requests: number; success: number; goodput: number }>>;
}

/** Per model, then tier: requests, success, goodput. */
export function modelFigures(all: readonly RequestOutcome[]): SystemFairness['models'] {
  const counts = new Map<string, Map<string, { requests: number; ok: number; good: number }>>();
  for (const o of all) {
    const tiers = counts.get(o.model) ?? new Map<string, { requests: number; ok: number; good: number }>();
    counts.set(o.model, tiers);
    const c = tiers.get(o.tier) ?? { requests: 0, ok: 0, good: 0 };
    tiers.set(o.tier, c);
    c.requests++;
    if (o.ok) c.ok++;
    if (o.good) c.good++;
  }
  return new Map(
    [...counts].map(([model, tiers]) => [
      model,
      new Map(
        [...tiers].map(([tier, c]) => [
          tier,
          { requests: c.requests, success: c.ok / c.requests, goodput: c.good / c.requests },
        ]),
      ),
    ]),
  );
}

/** Every baseline, then Sluice: the order of the tables' columns and rows. */
export function fairnessBySystem(c: RunComparison, trace: readonly TraceEvent[]): SystemFairness[] {
  const maxWait = (tier: string) =>
    Object.hasOwn(c.world.tierMaxWaitMs, tier) ? c.world.tierMaxWaitMs[tier]! : Infinity;
  const of = (name: SystemName, run: SystemRun, report: SystemReport): SystemFairness => {
    const all = outcomes(run.recorder.attempts, trace, maxWait);
    return { name, label: SYSTEM_LABELS[name], report, fairness: tierFairness(all), models: modelFigures(all) };
  };
  return [...BASELINES.map((b) => of(b, c.runs.baselines[b], c.baselines[b])), of('sluice', c.runs.sluice, c.sluice)];
}

const tierOf = (s: SystemFairness, tier: string): TierFairness | undefined =>
  Object.hasOwn(s.fairness, tier) ? s.fairness[tier] : undefined;

interface AccountRow {
  readonly tier: string;
  readonly account: string;
  readonly t: TierFairness;
}

/**
 * Sluice's accounts, tier by tier as the other tables, when all fit in `limit`; otherwise the
 * `limit` that come first by `figure` in `order` (then the busier account, then the name).
 */
function accountsShown(
  tiers: readonly string[],
  systems: readonly SystemFairness[],
  limit: number,
  figure: (t: TierFairness, account: string) => number,
  order: 'ascending' | 'descending',
): { all: AccountRow[]; shown: AccountRow[] } {
  const sluice = systems.at(-1)!;
  const all = tiers.flatMap((tier) => {
    const t = tierOf(sluice, tier);
    if (!t) return [];
    return Object.keys(t.accountRequests).map((account) => ({ tier, account, t }));
  });
  // Compared, not subtracted: a figure may be Infinity (never), and Infinity - Infinity is NaN.
  const compare = (x: number, y: number) => {
    if (x === y) return 0;
    return (order === 'ascending' ? x < y : x > y) ? -1 : 1;
  };
  if (all.length > limit)
    all.sort(
      (a, b) =>
        compare(figure(a.t, a.account), figure(b.t, b.account)) ||
        b.t.accountRequests[b.account]! - a.t.accountRequests[a.account]! ||
        (a.account < b.account ? -1 : a.account > b.account ? 1 : 0),
    );
  return { all, shown: all.slice(0, limit) };
}

const share = (record: Readonly<Record<string, number>> | undefined, key: string): string =>
  record && Object.hasOwn(record, key) ? pct(record[key]!) : '–';

export function tierFairnessTable(tiers: readonly string[], systems: readonly SystemFairness[]): Table {
  return {
    title:
      "per tier: success, goodput (started within the tier's maximum wait), Jain over tokens served ÷ asked across tenants",
    columns: ['tier', 'system', 'requests', 'success', 'goodput', 'Jain (tenants)', 'worst account / tier'],
    rows: tiers.flatMap((tier) =>
      systems.flatMap((s) => {
        const t = tierOf(s, tier);
        if (!t) return [];
        return [
          [
            tier,
            s.label,
            t.requests,
            pct(t.success),
            pct(t.goodput),
            t.jainTokens.toFixed(3),
            t.worstAccountRatio.toFixed(3),
          ],
        ];
      }),
    ),
  };
}

/** Models on pools of their own: per model and tier, the share each system served, and served in time. */
export function modelTable(tiers: readonly string[], systems: readonly SystemFairness[]): Table {
  const models = [...systems.at(-1)!.models.keys()].sort();
  return {
    title: "per model: success, and goodput (started within the tier's maximum wait)",
    columns: ['model', 'tier', 'requests', ...systems.flatMap((s) => [`${s.label} success`, `${s.label} goodput`])],
    rows: models.flatMap((model) =>
      tiers.flatMap((tier) => {
        const requests = systems.at(-1)!.models.get(model)?.get(tier)?.requests;
        if (requests === undefined) return [];
        return [
          [
            model,
            tier,
            requests,
            ...systems.flatMap((s) => {
              const f = s.models.get(model)?.get(tier);
              return f ? [pct(f.success), pct(f.goodput)] : ['–', '–'];
            }),
          ],
        ];
      }),
    ),
  };
}

/** One row per tenant of each tier: its requests, and the share of them each system served. */
export function tenantTable(tiers: readonly string[], systems: readonly SystemFairness[]): Table {
  const sluice = systems.at(-1)!;
  return {
    title: 'per tenant: requests served',
    columns: ['tier', 'tenant', 'accounts', 'requests', ...systems.map((s) => s.label)],
    rows: tiers.flatMap((tier) => {
      const t = tierOf(sluice, tier);
      if (!t) return [];
      return Object.keys(t.tenantRequests).map((tenant) => [
        tier,
        tenant,
        t.tenantAccounts[tenant]!,
        t.tenantRequests[tenant]!,
        ...systems.map((s) => share(tierOf(s, tier)?.tenantSuccess, tenant)),
      ]);
    }),
  };
}

/**
 * Every account, against its tier's success; when there are more than `limit`, the `limit`
 * Sluice served the smallest share of: where to look first in a trace of many accounts.
 */
export function worstAccountsTable(tiers: readonly string[], systems: readonly SystemFairness[], limit: number): Table {
  const { all, shown } = accountsShown(tiers, systems, limit, (t, account) => t.accountSuccess[account]!, 'ascending');
  return {
    title:
      shown.length < all.length
        ? `the ${shown.length} accounts (of ${all.length}) Sluice served the smallest share of`
        : 'per account: requests served',
    columns: ['account', 'tenant', 'tier', 'requests', 'tier success (Sluice)', ...systems.map((s) => s.label)],
    rows: shown.map(({ tier, account, t }) => [
      account,
      t.accountTenant[account]!,
      tier,
      t.accountRequests[account]!,
      pct(t.success),
      ...systems.map((s) => share(tierOf(s, tier)?.accountSuccess, account)),
    ]),
  };
}

/**
 * Every account's wait p50 / p99 (first send to GPU start, one never served counting as never),
 * tier by tier; when there are more than `limit`, the `limit` whose p99 was longest in Sluice. A
 * tier's wait p99 can be one account's burst waiting its turn while the tier's other accounts
 * pass it: per tier, that reads as the whole tier waiting.
 */
export function accountWaitTable(tiers: readonly string[], systems: readonly SystemFairness[], limit: number): Table {
  const { all, shown } = accountsShown(
    tiers,
    systems,
    limit,
    (t, account) => t.accountWaitMs[account]!.p99,
    'descending',
  );
  const wait = (s: SystemFairness, tier: string, account: string) => {
    const waits = tierOf(s, tier)?.accountWaitMs;
    if (!waits || !Object.hasOwn(waits, account)) return '–';
    const w = waits[account]!;
    return `${ms(w.p50)} / ${ms(w.p99)}`;
  };
  return {
    title:
      shown.length < all.length
        ? `the ${shown.length} accounts (of ${all.length}) with the longest wait p99 in Sluice: wait p50 / p99, first send to GPU start (never served: never)`
        : 'per account: wait p50 / p99, first send to GPU start (never served: never)',
    columns: ['account', 'tenant', 'tier', 'requests', ...systems.map((s) => s.label)],
    rows: shown.map(({ tier, account, t }) => [
      account,
      t.accountTenant[account]!,
      tier,
      t.accountRequests[account]!,
      ...systems.map((s) => wait(s, tier, account)),
    ]),
  };
}
