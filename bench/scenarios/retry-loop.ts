/**
 * retry-loop: the second seed's incident. An offline account's script has a bug:
 * from one moment on it sends far more than its quota and resends every refusal
 * after 50 ms, ignoring Retry-After, up to 100 times. Realtime and batch tenants
 * keep their usual traffic. Reported for both systems: how long until the looping
 * account is the top burster (most attempts in a trailing 10 s window, as a
 * "who bursts" dashboard shows it), the looping account's attempts and success,
 * and what everyone else sees (success and p99 latency, against a run of the same
 * trace without the loop).
 */
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { compare, type RunComparison } from '../lib/compare.js';
import { isOk, round, type Attempt } from '../lib/recorder.js';
import { createRng, type Rng } from '../lib/rng.js';
import { overviewTable, reasonsTable, tierTable, waitSplitTable } from '../lib/tables.js';
import { merge, poisson, retryLoop, type TraceEvent } from '../lib/trace.js';
import { LAB_MODEL, withEngineFlags, type AccountSpec, type World } from '../lib/world.js';
import type { Scenario, ScenarioContext, Table } from './types.js';

export interface RetryLoopParams {
  readonly durationMs: number;
  readonly loopFromMs: number;
  readonly loopToMs: number;
  /** New requests per second the buggy script sends during the loop. */
  readonly loopPerSec: number;
  readonly loopDelayMs: number;
  readonly loopMaxAttempts: number;
  /** The looping account's quota (requests per minute); its normal rate is well under it. */
  readonly loopAccountRpm: number;
  readonly realtimePerSec: number;
  readonly batchPerSec: number;
  readonly offlinePerSec: number;
  readonly gpuSlots: number;
  /** Trailing window for "top burster". */
  readonly burstWindowMs: number;
}

export const retryLoopFull: RetryLoopParams = {
  durationMs: 300_000,
  loopFromMs: 60_000,
  loopToMs: 240_000,
  loopPerSec: 2,
  loopDelayMs: 50,
  loopMaxAttempts: 100,
  loopAccountRpm: 30,
  realtimePerSec: 3,
  batchPerSec: 1,
  offlinePerSec: 0.2,
  gpuSlots: 16,
  burstWindowMs: 10_000,
};

export const retryLoopSmall: RetryLoopParams = { ...retryLoopFull, durationMs: 150_000, loopFromMs: 30_000, loopToMs: 120_000, loopPerSec: 1, realtimePerSec: 1.5, batchPerSec: 0.5, gpuSlots: 8 };

export const LOOPING_ACCOUNT = 'etl-bot';

export function retryLoopWorld(seed: number, p: RetryLoopParams, withLoop = true): World {
  const rng = createRng(seed);
  const tokens = (lo: number, hi: number) => (r: Rng) => r.int(lo, hi);
  const accounts: Record<string, AccountSpec> = {
    'support-1': { tenant: 'support', tier: 'realtime' },
    'support-2': { tenant: 'support', tier: 'realtime' },
    'analytics-1': { tenant: 'analytics', tier: 'realtime' },
    'reports-1': { tenant: 'reports', tier: 'batch' },
    'reports-2': { tenant: 'reports', tier: 'batch' },
    [LOOPING_ACCOUNT]: { tenant: 'etl', tier: 'offline', limits: { rpm: p.loopAccountRpm } },
  };
  const src = (label: string, ids: string[], lo: number, hi: number) => ({ rng: rng.fork(label), accounts: ids, model: LAB_MODEL, tokens: tokens(lo, hi) });
  const traces: TraceEvent[][] = [
    poisson(src('realtime', ['support-1', 'support-2', 'analytics-1'], 32, 128), p.realtimePerSec, 0, p.durationMs),
    poisson(src('batch', ['reports-1', 'reports-2'], 64, 192), p.batchPerSec, 0, p.durationMs),
    poisson(src('offline', [LOOPING_ACCOUNT], 64, 128), p.offlinePerSec, 0, p.durationMs),
  ];
  if (withLoop) traces.push(retryLoop(src('loop', [LOOPING_ACCOUNT], 64, 128), p.loopPerSec, p.loopFromMs, p.loopToMs, p.loopDelayMs, p.loopMaxAttempts));
  return {
    name: withLoop ? 'retry-loop' : 'retry-loop (no loop)',
    trace: merge(...traces),
    accounts,
    tiers: defaultTiers,
    defaults: defaultLimits,
    // The baseline's per-tenant limit for the looping tenant is the account's quota (its only account).
    baselineRpm: { etl: p.loopAccountRpm },
    gpu: { slots: p.gpuSlots, baseTokenMs: 10, queueLimit: p.gpuSlots, maxQueueWaitMs: 5_000 },
    bucketMs: 5_000,
    dashboard: true,
  };
}

/** First time at or after `from` when `account` has the most attempts in the trailing window; null if never. */
export function timeToTopBurster(attempts: readonly Attempt[], start: number, account: string, from: number, to: number, windowMs: number): number | null {
  const sorted = [...attempts].sort((a, b) => a.sentAt - b.sentAt);
  for (let t = from; t <= to; t += 1_000) {
    const counts = new Map<string, number>();
    for (const a of sorted) {
      const rel = a.sentAt - start;
      if (rel > t) break;
      if (rel > t - windowMs) counts.set(a.account, (counts.get(a.account) ?? 0) + 1);
    }
    const mine = counts.get(account) ?? 0;
    if (mine > 0 && [...counts.entries()].every(([k, v]) => k === account || v < mine)) return t - from;
  }
  return null;
}

function others(c: RunComparison, system: 'sluice' | 'baseline') {
  const attempts = c.runs[system].recorder.attempts.filter((a) => a.account !== LOOPING_ACCOUNT);
  const ok = attempts.filter((a) => a.status !== undefined && isOk(a.status));
  const lat = ok.map((a) => a.answeredAt! - a.sentAt).sort((a, b) => a - b);
  const p99 = lat.length ? lat[Math.min(lat.length - 1, Math.ceil(0.99 * lat.length) - 1)]! : 0;
  return { sent: attempts.length, success: attempts.length ? round(ok.length / attempts.length, 4) : 1, latencyP99Ms: round(p99) };
}

function dashboardTop(top: readonly { t: number; account: string | null }[] | undefined, from: number): number | null {
  const hit = top?.find((x) => x.t >= from && x.account === LOOPING_ACCOUNT);
  return hit ? hit.t - from : null;
}

function looper(c: RunComparison, system: 'sluice' | 'baseline', p: RetryLoopParams) {
  const run = c.runs[system];
  const mine = run.recorder.attempts.filter((a) => a.account === LOOPING_ACCOUNT);
  const requests = new Map<number, boolean>();
  for (const a of mine) requests.set(a.request, a.status !== undefined && isOk(a.status));
  return {
    attempts: mine.length,
    requests: requests.size,
    served: [...requests.values()].filter(Boolean).length,
    requestSuccess: requests.size ? round([...requests.values()].filter(Boolean).length / requests.size, 4) : 1,
    timeToTopBursterMs: timeToTopBurster(run.recorder.attempts, run.recorder.start, LOOPING_ACCOUNT, p.loopFromMs, p.loopToMs, p.burstWindowMs),
    /** Sluice only: until its own dashboard (lib/telemetry live view) shows the account on top. */
    dashboardTopAfterMs: dashboardTop(run.topAccounts, p.loopFromMs),
  };
}

export const retryLoopScenario: Scenario = {
  name: 'retry-loop',
  description: 'one offline account retrying in a tight loop: time until it is the top burster, and the effect on everyone else',
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? retryLoopFull : retryLoopSmall;
    const world = withEngineFlags(retryLoopWorld(ctx.seed, p), ctx.flags);
    ctx.log(`retry-loop: ${world.trace.length} requests, loop ${p.loopPerSec}/s from ${p.loopFromMs / 1000} s to ${p.loopToMs / 1000} s, resend after ${p.loopDelayMs} ms`);
    const c = await compare(world, { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log });
    ctx.log('retry-loop: the same trace without the loop, for reference');
    const quiet = await compare(withEngineFlags(retryLoopWorld(ctx.seed, p, false), ctx.flags), { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log });
    const fig = (system: 'sluice' | 'baseline') => ({ looper: looper(c, system, p), others: others(c, system), othersWithoutLoop: others(quiet, system) });
    const b = fig('baseline');
    const s = fig('sluice');
    const headline = {
      baselineLoopAttempts: b.looper.attempts,
      sluiceLoopAttempts: s.looper.attempts,
      baselineLoopRequestSuccess: b.looper.requestSuccess,
      sluiceLoopRequestSuccess: s.looper.requestSuccess,
      baselineTimeToTopBursterMs: b.looper.timeToTopBursterMs,
      sluiceTimeToTopBursterMs: s.looper.timeToTopBursterMs,
      sluiceDashboardTopBursterMs: s.looper.dashboardTopAfterMs,
      baselineOthersSuccess: b.others.success,
      sluiceOthersSuccess: s.others.success,
      baselineOthersSuccessWithoutLoop: b.othersWithoutLoop.success,
      sluiceOthersSuccessWithoutLoop: s.othersWithoutLoop.success,
      baselineOthersLatencyP99Ms: b.others.latencyP99Ms,
      sluiceOthersLatencyP99Ms: s.others.latencyP99Ms,
      baselineOthersLatencyP99MsWithoutLoop: b.othersWithoutLoop.latencyP99Ms,
      sluiceOthersLatencyP99MsWithoutLoop: s.othersWithoutLoop.latencyP99Ms,
    };
    const ms = (x: number | null) => (x === null ? 'never' : `${(x / 1000).toFixed(0)} s`);
    const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
    const table: Table = {
      title: `the looping account (${LOOPING_ACCOUNT}) and everyone else`,
      columns: ['', 'baseline (hard limiter)', 'Sluice'],
      rows: [
        ['looping account: attempts sent', b.looper.attempts, s.looper.attempts],
        ['looping account: requests served / made', `${b.looper.served} / ${b.looper.requests}`, `${s.looper.served} / ${s.looper.requests}`],
        ['time until it is the top burster (attempts, trailing 10 s)', ms(b.looper.timeToTopBursterMs), ms(s.looper.timeToTopBursterMs)],
        ['time until Sluice’s dashboard shows it on top', 'no dashboard', ms(s.looper.dashboardTopAfterMs)],
        ['others: success (loop / no loop)', `${pct(b.others.success)} / ${pct(b.othersWithoutLoop.success)}`, `${pct(s.others.success)} / ${pct(s.othersWithoutLoop.success)}`],
        ['others: latency p99 (loop / no loop)', `${b.others.latencyP99Ms} / ${b.othersWithoutLoop.latencyP99Ms} ms`, `${s.others.latencyP99Ms} / ${s.othersWithoutLoop.latencyP99Ms} ms`],
      ],
    };
    return {
      scenario: 'retry-loop',
      seed: ctx.seed,
      size: ctx.size,
      params: { ...p, tiers: 'lib/policy defaults (offline degrades over quota, hard cap at hardCapFactor x quota)', baselineRpmForLoopingTenant: p.loopAccountRpm, gpu: world.gpu },
      headline,
      tables: [table, overviewTable(c), tierTable(c), reasonsTable(c), waitSplitTable(c)],
      details: { baseline: b, sluice: s },
      comparison: c,
    };
  },
};
