/**
 * The dashboard's view of the flow, and the rows both of its sources build alike: one
 * process's telemetry (telemetry.ts) and the deployment's aggregate in the store
 * (aggregate/view.ts).
 */
import { own } from '../lookup.js';
import type { Policy } from '../policy/schema.js';
import type { AlertRecord } from './alerts.js';
import { noneOffered, type AccountOffered, type HistoryView, type Offered } from './flow-window.js';

export { emptySeries, HISTORY_SERIES, type HistorySeries } from './flow-window.js';

export interface Booking {
  readonly id: string;
  readonly tenant: string;
  readonly model?: string;
  readonly startsAt: number;
  readonly endsAt: number;
  readonly extra: Readonly<Record<string, number>>;
  readonly note?: string;
  readonly active: boolean;
}

export interface WarningRecord {
  readonly at: number;
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
  readonly model: string;
  readonly message: string;
  /** Warnings of this account and model folded into this one (the latest is kept). */
  readonly count: number;
}

export interface TenantRow {
  readonly tenant: string;
  readonly perSecond: number;
  readonly admitted: number;
  readonly refused: number;
  readonly warned: number;
  readonly queued: number;
  readonly paused: boolean;
}

export interface AccountRow {
  readonly account: string;
  readonly tenant: string;
  readonly tier: string;
  readonly perSecond: number;
  readonly admitted: number;
  readonly refused: number;
  readonly warned: number;
  readonly paused: boolean;
}

export interface LiteTopicRow {
  readonly liteTopic: string;
  readonly tier: string;
  readonly tenant: string;
  readonly model: string;
  readonly depth: number;
  readonly maxQueueWaitMs?: number;
}

export interface LiveState {
  readonly now: number;
  readonly burstWindowMs: number;
  readonly tenants: readonly TenantRow[];
  readonly accounts: readonly AccountRow[];
  readonly liteTopics: readonly LiteTopicRow[];
  readonly history: HistoryView;
  readonly gpu: readonly {
    model: string;
    capacity: number;
    paceFactor: number;
    tiers: { tier: string; inUse: number; reserved: number }[];
  }[];
  readonly totals: Record<string, number>;
  readonly paused: { readonly tenants: readonly string[]; readonly accounts: readonly string[] };
  /** Burst bookings (policy reservations) active now or upcoming, soonest first. */
  readonly bookings: readonly Booking[];
  readonly warnings: readonly WarningRecord[];
  readonly alerts: readonly AlertRecord[];
  readonly activeAlerts: readonly AlertRecord[];
}

/** What tenants and accounts offered over a window, as the busiest-first rows the view shows (`limit` each). */
export function flowRows(input: {
  readonly policy: Policy;
  readonly windowMs: number;
  readonly tenants: ReadonlyMap<string, Offered>;
  readonly accounts: ReadonlyMap<string, AccountOffered>;
  readonly queuedByTenant: ReadonlyMap<string, number>;
  readonly limit: number;
}): { readonly tenants: TenantRow[]; readonly accounts: AccountRow[] } {
  const { policy, queuedByTenant } = input;
  const windowS = input.windowMs / 1000;
  const tenants = [...new Set([...input.tenants.keys(), ...queuedByTenant.keys()])].map((tenant) => {
    const s = input.tenants.get(tenant) ?? noneOffered();
    return {
      tenant,
      perSecond: round1((s.admitted + s.refused) / windowS),
      admitted: s.admitted,
      refused: s.refused,
      warned: s.warned,
      queued: queuedByTenant.get(tenant) ?? 0,
      paused: own(policy.tenants, tenant)?.paused ?? false,
    };
  });
  tenants.sort((a, b) => b.perSecond - a.perSecond || b.queued - a.queued || a.tenant.localeCompare(b.tenant));
  const accounts = [...input.accounts].map(([account, s]) => ({
    account,
    tenant: s.tenant,
    tier: s.tier,
    perSecond: round1((s.admitted + s.refused) / windowS),
    admitted: s.admitted,
    refused: s.refused,
    warned: s.warned,
    paused: own(policy.accounts, account)?.paused ?? false,
  }));
  accounts.sort((a, b) => b.perSecond - a.perSecond || a.account.localeCompare(b.account));
  return { tenants: tenants.slice(0, input.limit), accounts: accounts.slice(0, input.limit) };
}

/** Deepest first; the view shows `2 × limit` of them. */
export function deepestLiteTopics(rows: LiteTopicRow[], limit: number): LiteTopicRow[] {
  return rows.sort((a, b) => b.depth - a.depth || a.liteTopic.localeCompare(b.liteTopic)).slice(0, 2 * limit);
}

export function pausedIds(policy: Policy): LiveState['paused'] {
  return {
    tenants: Object.entries(policy.tenants)
      .filter(([, t]) => t.paused)
      .map(([n]) => n),
    accounts: Object.entries(policy.accounts)
      .filter(([, a]) => a.paused)
      .map(([n]) => n),
  };
}

/** Reservations of the policy (absent from older policy documents) that have not ended. */
export function bookingsOf(policy: Policy, now: number): Booking[] {
  const list = (policy as { reservations?: readonly Omit<Booking, 'active'>[] }).reservations ?? [];
  return list
    .filter((r) => r.endsAt > now)
    .map((r) => ({
      id: r.id,
      tenant: r.tenant,
      model: r.model,
      startsAt: r.startsAt,
      endsAt: r.endsAt,
      extra: r.extra,
      note: r.note,
      active: r.startsAt <= now,
    }))
    .sort((a, b) => a.startsAt - b.startsAt);
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
