import { describe, expect, it } from 'vitest';
import { jain, outcomes, tierFairness } from '../../../bench/lib/fairness.js';
import {
  accountWaitTable,
  modelFigures,
  modelTable,
  tenantTable,
  tierFairnessTable,
  worstAccountsTable,
  type SystemFairness,
} from '../../../bench/lib/fairness-tables.js';
import type { Attempt } from '../../../bench/lib/recorder.js';
import type { SystemReport } from '../../../bench/lib/compare.js';

function attempt(request: number, account: string, tenant: string, tier: string, status: number, at = 0): Attempt {
  return { request, account, tenant, tier, sentAt: at, status, ...(status === 200 ? { startedAt: at + 100 } : {}) };
}

/** Four realtime requests of two tenants whose names are Object.prototype's, one batch request. */
function attempts(): Attempt[] {
  return [
    attempt(0, 'constructor', '__proto__', 'realtime', 200),
    attempt(1, 'constructor', '__proto__', 'realtime', 429),
    attempt(2, 'toString', 'hasOwnProperty', 'realtime', 200),
    attempt(3, 'toString', 'hasOwnProperty', 'realtime', 200),
    attempt(4, 'b', 'tb', 'batch', 200),
  ];
}
// Requests 2 and 3 ask another model.
const trace = [10, 30, 20, 20, 5].map((tokens, i) => ({
  t: i,
  account: 'x',
  model: i === 2 || i === 3 ? 'n' : 'm',
  tokens,
}));

describe('fairness figures', () => {
  it("Jain's index: 1 when all are equal, 1/n when one gets everything", () => {
    expect(jain([0.5, 0.5, 0.5])).toBe(1);
    expect(jain([1, 0, 0, 0])).toBe(0.25);
    expect(jain([])).toBe(1);
  });

  it("a request's last attempt decides it; goodput counts from its first send", () => {
    const retried: Attempt[] = [
      { request: 0, account: 'a', tenant: 't', tier: 'realtime', sentAt: 0, status: 429 },
      { request: 0, account: 'a', tenant: 't', tier: 'realtime', sentAt: 9_000, status: 200, startedAt: 11_000 },
    ];
    const [o] = outcomes(retried, trace, () => 10_000);
    expect(o).toMatchObject({ ok: true, good: false, tokens: 10 });
  });

  it('per tier, tenant and account, with names that are members of Object.prototype', () => {
    const f = tierFairness(outcomes(attempts(), trace, () => 10_000));
    expect(Object.keys(f)).toEqual(['batch', 'realtime']);
    const rt = f.realtime!;
    expect(rt).toMatchObject({ requests: 4, success: 0.75, goodput: 0.75 });
    expect(Object.hasOwn(rt.tenantRequests, '__proto__')).toBe(true);
    expect(rt.tenantRequests['__proto__']).toBe(2);
    expect(rt.tenantSuccess).toEqual({ ['__proto__']: 0.5, hasOwnProperty: 1 });
    // Tokens served ÷ asked: 10 of 40 and 40 of 40.
    expect(rt.tenantTokenShare).toEqual({ ['__proto__']: 0.25, hasOwnProperty: 1 });
    expect(rt.jainTokens).toBeCloseTo(jain([0.25, 1]), 4);
    expect(rt.accountSuccess).toEqual({ constructor: 0.5, toString: 1 });
    expect(rt.accountTenant).toEqual({ constructor: '__proto__', toString: 'hasOwnProperty' });
    expect(rt.worstAccountRatio).toBeCloseTo(0.5 / 0.75, 4);
    // First send to GPU start; the request never served waits forever.
    expect(rt.accountWaitMs).toEqual({ constructor: { p50: 100, p99: Infinity }, toString: { p50: 100, p99: 100 } });
  });

  it('a request never served waits forever, and is never good, however long its tier may wait', () => {
    const [o] = outcomes([attempt(0, 'a', 't', 'batch', 429)], trace, () => Infinity);
    expect(o).toMatchObject({ ok: false, good: false, waitMs: Infinity });
  });
});

describe('fairness tables', () => {
  const sluiceOutcomes = outcomes(attempts(), trace, () => 10_000);
  const sluice: SystemFairness = {
    name: 'sluice',
    label: 'Sluice',
    report: {} as SystemReport,
    fairness: tierFairness(sluiceOutcomes),
    models: modelFigures(sluiceOutcomes),
  };
  // A baseline that served only request 0, and never saw the batch tier.
  const baselineOutcomes = outcomes(
    attempts()
      .slice(0, 4)
      .map((a) => ({ ...a, status: a.request === 0 ? 200 : 429 })),
    trace,
    () => 10_000,
  );
  const baseline: SystemFairness = {
    name: 'priority',
    label: 'priority',
    report: {} as SystemReport,
    fairness: tierFairness(baselineOutcomes),
    models: modelFigures(baselineOutcomes),
  };
  const systems = [baseline, sluice];

  it('per tier, a row for every system that saw the tier', () => {
    const t = tierFairnessTable(['realtime', 'batch'], systems);
    expect(t.rows.map((r) => [r[0], r[1], r[3]])).toEqual([
      ['realtime', 'priority', '25.00%'],
      ['realtime', 'Sluice', '75.00%'],
      ['batch', 'Sluice', '100.00%'],
    ]);
  });

  it("per tenant: every tenant of Sluice's run, a dash where a system has no figure", () => {
    const t = tenantTable(['realtime', 'batch'], systems);
    expect(t.columns).toEqual(['tier', 'tenant', 'accounts', 'requests', 'priority', 'Sluice']);
    expect(t.rows).toEqual([
      ['realtime', '__proto__', 1, 2, '50.00%', '50.00%'],
      ['realtime', 'hasOwnProperty', 1, 2, '0.00%', '100.00%'],
      ['batch', 'tb', 1, 1, '–', '100.00%'],
    ]);
  });

  it('per model and tier: the share each system served, a dash where a system has no figure', () => {
    const t = modelTable(['realtime', 'batch'], systems);
    expect(t.columns).toEqual([
      'model',
      'tier',
      'requests',
      'priority success',
      'priority goodput',
      'Sluice success',
      'Sluice goodput',
    ]);
    expect(t.rows).toEqual([
      ['m', 'realtime', 2, '50.00%', '50.00%', '50.00%', '50.00%'],
      ['m', 'batch', 1, '–', '–', '100.00%', '100.00%'],
      ['n', 'realtime', 2, '0.00%', '0.00%', '100.00%', '100.00%'],
    ]);
  });

  it('every account tier by tier; past the limit, those Sluice served worst first, saying so', () => {
    const all = worstAccountsTable(['realtime', 'batch'], systems, 10);
    expect(all.title).toBe('per account: requests served');
    expect(all.rows.map((r) => r[0])).toEqual(['constructor', 'toString', 'b']);
    const cut = worstAccountsTable(['batch', 'realtime'], systems, 1);
    expect(cut.title).toBe('the 1 accounts (of 3) Sluice served the smallest share of');
    expect(cut.rows).toEqual([['constructor', '__proto__', 'realtime', 2, '75.00%', '50.00%', '50.00%']]);
  });

  it('per account wait p50 / p99; past the limit, the longest p99 in Sluice first, never before any time', () => {
    const all = accountWaitTable(['realtime', 'batch'], systems, 10);
    expect(all.title).toBe('per account: wait p50 / p99, first send to GPU start (never served: never)');
    expect(all.columns).toEqual(['account', 'tenant', 'tier', 'requests', 'priority', 'Sluice']);
    expect(all.rows).toEqual([
      ['constructor', '__proto__', 'realtime', 2, '100 ms / never', '100 ms / never'],
      ['toString', 'hasOwnProperty', 'realtime', 2, 'never / never', '100 ms / 100 ms'],
      ['b', 'tb', 'batch', 1, '–', '100 ms / 100 ms'],
    ]);
    const cut = accountWaitTable(['batch', 'realtime'], systems, 2);
    expect(cut.title).toMatch(/^the 2 accounts \(of 3\) with the longest wait p99 in Sluice/);
    expect(cut.rows.map((r) => r[0])).toEqual(['constructor', 'toString']);
  });
});
