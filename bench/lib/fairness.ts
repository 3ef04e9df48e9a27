/**
 * Figures of who got what under overload, computed from a run's attempts and the
 * trace (the tokens each request asked for): per account success, goodput (served
 * within the tier's maximum queue wait), and Jain's fairness index over tokens
 * served ÷ tokens asked across the tenants of a tier.
 */
import { waitBeforeGpuMs } from './felt.js';
import { isOk, percentiles, round, type Attempt } from './recorder.js';
import type { TraceEvent } from './trace.js';

/** Jain's index of `xs`: 1 when all are equal, 1/n when one gets everything. */
export function jain(xs: readonly number[]): number {
  if (xs.length === 0) return 1;
  const sum = xs.reduce((a, b) => a + b, 0);
  const squares = xs.reduce((a, b) => a + b * b, 0);
  return squares === 0 ? 1 : (sum * sum) / (xs.length * squares);
}

export interface RequestOutcome {
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
  readonly model: string;
  readonly tokens: number;
  readonly ok: boolean;
  /** Served, and started within its tier's maximum queue wait of its first send. */
  readonly good: boolean;
  /** First send to its start on the GPU; Infinity when it was never served (felt.ts waitBeforeGpuMs). */
  readonly waitMs: number;
}

/** One outcome per request (its last attempt decides), joined with the tokens it asked for. */
export function outcomes(
  attempts: readonly Attempt[],
  trace: readonly TraceEvent[],
  maxWaitMs: (tier: string) => number,
): RequestOutcome[] {
  const first = new Map<number, Attempt>();
  const last = new Map<number, Attempt>();
  for (const a of attempts) {
    if (!first.has(a.request)) first.set(a.request, a);
    last.set(a.request, a);
  }
  const out: RequestOutcome[] = [];
  for (const [request, a] of last) {
    const ok = a.status !== undefined && isOk(a.status);
    const sentAt = first.get(request)!.sentAt;
    const waitMs = waitBeforeGpuMs(sentAt, a);
    const good = Number.isFinite(waitMs) && waitMs <= maxWaitMs(a.tier);
    const e = trace[request];
    out.push({
      tier: a.tier,
      tenant: a.tenant,
      account: a.account,
      model: e?.model ?? '',
      tokens: e?.tokens ?? 0,
      ok,
      good,
      waitMs,
    });
  }
  return out;
}

export interface TierFairness {
  readonly requests: number;
  readonly success: number;
  readonly goodput: number;
  /** Jain over tenants of tokens served / tokens asked. */
  readonly jainTokens: number;
  /** Per tenant: tokens served / tokens asked. */
  readonly tenantTokenShare: Readonly<Record<string, number>>;
  /** Per tenant: requests, accounts, and the share of its requests served. */
  readonly tenantRequests: Readonly<Record<string, number>>;
  readonly tenantAccounts: Readonly<Record<string, number>>;
  readonly tenantSuccess: Readonly<Record<string, number>>;
  /** Per account: success rate, requests, and its tenant. */
  readonly accountSuccess: Readonly<Record<string, number>>;
  readonly accountRequests: Readonly<Record<string, number>>;
  readonly accountTenant: Readonly<Record<string, string>>;
  /**
   * Per account: wait p50 and p99, first send to GPU start, one never served counting as endless
   * (Infinity; null in JSON). A tier's wait p99 can be one account's burst: this says whose.
   */
  readonly accountWaitMs: Readonly<Record<string, { readonly p50: number; readonly p99: number }>>;
  /** Lowest account success over the tier's success (1 when every account does as well as the tier). */
  readonly worstAccountRatio: number;
}

export function tierFairness(all: readonly RequestOutcome[]): Record<string, TierFairness> {
  const byTier = new Map<string, RequestOutcome[]>();
  for (const o of all) {
    const list = byTier.get(o.tier);
    if (list) list.push(o);
    else byTier.set(o.tier, [o]);
  }
  const out: Record<string, TierFairness> = {};
  for (const [tier, list] of [...byTier].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const success = list.filter((o) => o.ok).length / list.length;
    const tenants = new Map<string, { asked: number; served: number; n: number; ok: number; accounts: Set<string> }>();
    const accounts = new Map<string, { n: number; ok: number; tenant: string; waits: number[] }>();
    for (const o of list) {
      const t = tenants.get(o.tenant) ?? { asked: 0, served: 0, n: 0, ok: 0, accounts: new Set() };
      t.asked += o.tokens;
      t.n++;
      t.accounts.add(o.account);
      if (o.ok) {
        t.served += o.tokens;
        t.ok++;
      }
      tenants.set(o.tenant, t);
      const a = accounts.get(o.account) ?? { n: 0, ok: 0, tenant: o.tenant, waits: [] };
      a.n++;
      a.waits.push(o.waitMs);
      if (o.ok) a.ok++;
      accounts.set(o.account, a);
    }
    const sortedTenants = [...tenants].sort(([a], [b]) => (a < b ? -1 : 1));
    const sortedAccounts = [...accounts].sort(([a], [b]) => (a < b ? -1 : 1));
    const shares = Object.fromEntries(
      sortedTenants.map(([name, t]) => [name, round(t.asked ? t.served / t.asked : 1, 4)]),
    );
    const accountSuccess = Object.fromEntries(sortedAccounts.map(([name, a]) => [name, round(a.ok / a.n, 4)]));
    const worst = Object.values(accountSuccess).reduce((a, b) => Math.min(a, b), Infinity);
    out[tier] = {
      requests: list.length,
      success: round(success, 4),
      goodput: round(list.filter((o) => o.good).length / list.length, 4),
      jainTokens: round(jain([...tenants.values()].map((t) => (t.asked ? t.served / t.asked : 1))), 4),
      tenantTokenShare: shares,
      tenantRequests: Object.fromEntries(sortedTenants.map(([name, t]) => [name, t.n])),
      tenantAccounts: Object.fromEntries(sortedTenants.map(([name, t]) => [name, t.accounts.size])),
      tenantSuccess: Object.fromEntries(sortedTenants.map(([name, t]) => [name, round(t.ok / t.n, 4)])),
      accountSuccess,
      accountRequests: Object.fromEntries(sortedAccounts.map(([name, a]) => [name, a.n])),
      accountTenant: Object.fromEntries(sortedAccounts.map(([name, a]) => [name, a.tenant])),
      accountWaitMs: Object.fromEntries(
        sortedAccounts.map(([name, a]) => {
          const { p50, p99 } = percentiles(a.waits);
          return [name, { p50, p99 }];
        }),
      ),
      worstAccountRatio: round(success > 0 ? worst / success : 1, 4),
    };
  }
  return out;
}
