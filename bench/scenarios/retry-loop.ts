/**
 * retry-loop: the second seed's incident. An offline account's script has a bug:
 * from one moment on it sends far more than its quota and resends every refusal
 * after 50 ms, ignoring Retry-After, up to 100 times. Realtime and batch tenants
 * keep their usual traffic. Reported for both systems: how long until the looping
 * account is the top burster (most attempts in a trailing 10 s window, as a
 * "who bursts" dashboard shows it), the looping account's attempts and success,
 * and what everyone else sees (success and p99 latency, against a run of the same
 * trace without the loop). Every baseline holds the looping account to the hard
 * cap Sluice's degrade tier runs to (hardCapFactor x its quota), not its quota.
 */
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { compare, type RunComparison } from '../lib/compare.js';
import { isOk, round, type Attempt } from '../lib/recorder.js';
import { createRng, type Rng } from '../lib/rng.js';
import { BASELINES, SYSTEM_LABELS } from '../lib/baselines.js';
import { baselineParams, comparisonTables, feltHeadline } from '../lib/sections.js';
import type { SystemName, SystemRun } from '../lib/systems.js';
import { headlineEntries, pct, versusBest, type Better } from '../lib/versus.js';
import { merge, poisson, retryLoop, type TraceEvent } from '../lib/trace.js';
import { LAB_MODEL, withEngineFlags, worldPolicy, type AccountSpec, type World } from '../lib/world.js';
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

export const retryLoopSmall: RetryLoopParams = {
  ...retryLoopFull,
  durationMs: 150_000,
  loopFromMs: 30_000,
  loopToMs: 120_000,
  loopPerSec: 1,
  realtimePerSec: 1.5,
  batchPerSec: 0.5,
  gpuSlots: 8,
};

export const LOOPING_ACCOUNT = 'etl-bot';

const SYSTEMS: readonly SystemName[] = ['sluice', ...BASELINES];

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
  const src = (label: string, ids: string[], lo: number, hi: number, streamShare = 0) => ({
    rng: rng.fork(label),
    accounts: ids,
    model: LAB_MODEL,
    tokens: tokens(lo, hi),
    streamShare,
  });
  const traces: TraceEvent[][] = [
    // Realtime is chat UIs, which stream; the reports job and the looping ETL bot read whole answers.
    poisson(src('realtime', ['support-1', 'support-2', 'analytics-1'], 32, 128, 1), p.realtimePerSec, 0, p.durationMs),
    poisson(src('batch', ['reports-1', 'reports-2'], 64, 192), p.batchPerSec, 0, p.durationMs),
    poisson(src('offline', [LOOPING_ACCOUNT], 64, 128), p.offlinePerSec, 0, p.durationMs),
  ];
  if (withLoop)
    traces.push(
      retryLoop(
        src('loop', [LOOPING_ACCOUNT], 64, 128),
        p.loopPerSec,
        p.loopFromMs,
        p.loopToMs,
        p.loopDelayMs,
        p.loopMaxAttempts,
      ),
    );
  return {
    name: withLoop ? 'retry-loop' : 'retry-loop (no loop)',
    trace: merge(...traces),
    accounts,
    tiers: defaultTiers,
    defaults: defaultLimits,
    gpu: { slots: p.gpuSlots, baseTokenMs: 10, queueLimit: p.gpuSlots, maxQueueWaitMs: 5_000 },
    bucketMs: 5_000,
    dashboard: true,
  };
}

/** First time at or after `from` when `account` has the most attempts in the trailing window; null if never. */
export function timeToTopBurster(
  attempts: readonly Attempt[],
  start: number,
  account: string,
  from: number,
  to: number,
  windowMs: number,
): number | null {
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

function runOf(c: RunComparison, system: SystemName): SystemRun {
  return system === 'sluice' ? c.runs.sluice : c.runs.baselines[system];
}

function others(c: RunComparison, system: SystemName) {
  const attempts = runOf(c, system).recorder.attempts.filter((a) => a.account !== LOOPING_ACCOUNT);
  const ok = attempts.filter((a) => a.status !== undefined && isOk(a.status));
  const lat = ok.map((a) => a.answeredAt! - a.sentAt).sort((a, b) => a - b);
  const p99 = lat.length ? lat[Math.min(lat.length - 1, Math.ceil(0.99 * lat.length) - 1)]! : 0;
  return {
    sent: attempts.length,
    success: attempts.length ? round(ok.length / attempts.length, 4) : 1,
    latencyP99Ms: round(p99),
  };
}

function dashboardTop(top: readonly { t: number; account: string | null }[] | undefined, from: number): number | null {
  const hit = top?.find((x) => x.t >= from && x.account === LOOPING_ACCOUNT);
  return hit ? hit.t - from : null;
}

function looper(c: RunComparison, system: SystemName, p: RetryLoopParams) {
  const run = runOf(c, system);
  const mine = run.recorder.attempts.filter((a) => a.account === LOOPING_ACCOUNT);
  const requests = new Map<number, boolean>();
  for (const a of mine) requests.set(a.request, a.status !== undefined && isOk(a.status));
  return {
    attempts: mine.length,
    requests: requests.size,
    served: [...requests.values()].filter(Boolean).length,
    requestSuccess: requests.size ? round([...requests.values()].filter(Boolean).length / requests.size, 4) : 1,
    timeToTopBursterMs: timeToTopBurster(
      run.recorder.attempts,
      run.recorder.start,
      LOOPING_ACCOUNT,
      p.loopFromMs,
      p.loopToMs,
      p.burstWindowMs,
    ),
    /** Sluice only: until its own dashboard (lib/telemetry live view) shows the account on top. */
    dashboardTopAfterMs: dashboardTop(run.topAccounts, p.loopFromMs),
  };
}

export const retryLoopScenario: Scenario = {
  name: 'retry-loop',
  description:
    'one offline account retrying in a tight loop: time until it is the top burster, and the effect on everyone else',
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? retryLoopFull : retryLoopSmall;
    const world = withEngineFlags(retryLoopWorld(ctx.seed, p), ctx.flags);
    ctx.log(
      `retry-loop: ${world.trace.length} requests, loop ${p.loopPerSec}/s from ${p.loopFromMs / 1000} s to ${p.loopToMs / 1000} s, resend after ${p.loopDelayMs} ms`,
    );
    const c = await compare(world, { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log });
    ctx.log('retry-loop: the same trace without the loop, for reference');
    const quiet = await compare(withEngineFlags(retryLoopWorld(ctx.seed, p, false), ctx.flags), {
      ...(ctx.engine ? { engine: ctx.engine } : {}),
      progress: ctx.log,
    });
    const fig = (system: SystemName) => ({
      looper: looper(c, system, p),
      others: others(c, system),
      othersWithoutLoop: others(quiet, system),
    });
    const figs = Object.fromEntries(SYSTEMS.map((system) => [system, fig(system)])) as Record<
      SystemName,
      ReturnType<typeof fig>
    >;
    const versus = (f: (x: ReturnType<typeof fig>) => number, better: Better) =>
      versusBest(f(figs.sluice), { shallow: f(figs.shallow), fcfs: f(figs.fcfs), priority: f(figs.priority) }, better);
    const figures: [string, string, (x: ReturnType<typeof fig>) => number, Better, (x: number) => string][] = [
      ['LoopAttempts', 'looping account: attempts sent', (x) => x.looper.attempts, 'lower', String],
      ['LoopRequestSuccess', 'looping account: requests served / made', (x) => x.looper.requestSuccess, 'higher', pct],
      ['OthersSuccess', 'others: success', (x) => x.others.success, 'higher', pct],
      ['OthersLatencyP99Ms', 'others: latency p99', (x) => x.others.latencyP99Ms, 'lower', (x) => `${x} ms`],
      [
        'OthersSuccessWithoutLoop',
        'others without the loop: success',
        (x) => x.othersWithoutLoop.success,
        'higher',
        pct,
      ],
      [
        'OthersLatencyP99MsWithoutLoop',
        'others without the loop: latency p99',
        (x) => x.othersWithoutLoop.latencyP99Ms,
        'lower',
        (x) => `${x} ms`,
      ],
    ];
    const headline = {
      ...Object.assign({}, ...figures.map(([name, , f, better]) => headlineEntries(name, versus(f, better)))),
      ...Object.fromEntries(
        SYSTEMS.map((system) => [`${system}TimeToTopBursterMs`, figs[system].looper.timeToTopBursterMs]),
      ),
      sluiceDashboardTopBursterMs: figs.sluice.looper.dashboardTopAfterMs,
      ...feltHeadline(c),
    };
    const ms = (x: number | null) => (x === null ? 'never' : `${(x / 1000).toFixed(0)} s`);
    const table: Table = {
      title: `the looping account (${LOOPING_ACCOUNT}) and everyone else; every system holds it to the same hard cap (${p.loopAccountRpm} rpm x the offline tier's hardCapFactor)`,
      columns: ['', SYSTEM_LABELS.sluice, ...BASELINES.map((b) => SYSTEM_LABELS[b]), 'best baseline', 'Sluice vs best'],
      rows: [
        ...figures.map(([, label, f, better, format]) => {
          const v = versus(f, better);
          return [label, format(v.sluice), ...BASELINES.map((b) => format(v.baselines[b])), v.bestIs, v.verdict];
        }),
        [
          'time until it is the top burster (attempts, trailing 10 s)',
          ms(figs.sluice.looper.timeToTopBursterMs),
          ...BASELINES.map((b) => ms(figs[b].looper.timeToTopBursterMs)),
          '',
          '',
        ],
        [
          'time until Sluice’s dashboard shows it on top',
          ms(figs.sluice.looper.dashboardTopAfterMs),
          ...BASELINES.map(() => 'no dashboard'),
          '',
          '',
        ],
      ],
    };
    return {
      scenario: 'retry-loop',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        ...p,
        tiers: 'lib/policy defaults (offline degrades over quota, hard cap at hardCapFactor x quota)',
        loopingAccountHardCapRpm: p.loopAccountRpm * worldPolicy(world).tiers.offline!.hardCapFactor,
        gpu: world.gpu,
        ...baselineParams(world, c),
      },
      headline,
      tables: [table, ...comparisonTables(c)],
      details: figs,
      comparison: c,
    };
  },
};
