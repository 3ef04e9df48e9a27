/**
 * seed1-ratio: the first seed's claim, "10x lower rate-limited ratio". Many tenants
 * with fixed quotas send a steady Poisson base load plus bursts that stay within
 * their quota per minute but outrun the GPU for a few seconds; now and then a
 * tenant bursts twice in a minute and goes over its quota. The baselines pass
 * everything under quota straight to the GPU: with a shallow queue it refuses what
 * it cannot queue, with an engine queue (FCFS or by priority) it queues everything
 * until the client gives up. Sluice admits the same requests and holds them in their
 * LiteTopic until a slot frees. Reported: refused / sent for every system and the
 * ratio against the shallow and the best baseline, GPU overload, what users feel,
 * and the queue wait Sluice adds.
 */
import { BASELINES, SYSTEM_LABELS } from '../lib/baselines.js';
import { compare } from '../lib/compare.js';
import { createRng } from '../lib/rng.js';
import { baselineParams, comparisonTables, feltHeadline } from '../lib/sections.js';
import { compareFigure, headlineOf, type FigureSpec } from '../lib/versus.js';
import { burst, merge, OPENAI_SDK_RETRY, poisson, type RetryBehavior, type TraceEvent } from '../lib/trace.js';
import { LAB_MODEL, withEngineFlags, type World } from '../lib/world.js';
import type { SystemReport } from '../lib/compare.js';
import type { Scenario, ScenarioContext, Table } from './types.js';

export interface Seed1Params {
  readonly tenants: number;
  readonly durationMs: number;
  /** Base load per tenant, requests per second. */
  readonly basePerSec: number;
  /** Mean time between a tenant's bursts. */
  readonly burstEveryMs: number;
  readonly burstSize: readonly [number, number];
  readonly burstSpreadMs: readonly [number, number];
  /** Quota per tenant (requests per minute), for both systems. */
  readonly rpm: number;
  readonly gpuSlots: number;
  /** Release pace of each tenant's LiteTopic (Sluice only). */
  readonly pacePerSec: number;
  readonly paceBurst: number;
  /** Share of each app's requests that stream (time to first token is measured for them). */
  readonly streamShare: number;
  /** How clients resend a refused request; default the OpenAI SDK's (two resends, Retry-After honored). */
  readonly clientRetry?: RetryBehavior | null;
}

export const seed1Full: Seed1Params = {
  tenants: 20,
  durationMs: 10 * 60_000,
  basePerSec: 0.25,
  burstEveryMs: 240_000,
  burstSize: [20, 60],
  burstSpreadMs: [2_000, 6_000],
  rpm: 100,
  gpuSlots: 16,
  pacePerSec: 6,
  paceBurst: 10,
  streamShare: 0.5,
};

/** What the tests run: fewer tenants and a shorter trace, same shape and ratios. */
export const seed1Small: Seed1Params = { ...seed1Full, tenants: 10, durationMs: 5 * 60_000, gpuSlots: 8 };

export function seed1World(seed: number, p: Seed1Params): World {
  const rng = createRng(seed);
  const tokens = (r: ReturnType<typeof createRng>) => r.int(32, 96);
  const traces: TraceEvent[][] = [];
  const accounts: Record<string, { tenant: string; tier: string }> = {};
  for (let i = 0; i < p.tenants; i++) {
    const tenant = `tenant-${String(i).padStart(2, '0')}`;
    const account = `${tenant}-app`;
    accounts[account] = { tenant, tier: 'standard' };
    const retry = p.clientRetry === undefined ? OPENAI_SDK_RETRY : p.clientRetry;
    // Apps behind a model gateway: chat front ends stream, back-end calls do not.
    const src = {
      rng: rng.fork(tenant),
      accounts: [account],
      model: LAB_MODEL,
      tokens,
      streamShare: p.streamShare,
      ...(retry ? { retry } : {}),
    };
    traces.push(poisson(src, p.basePerSec, 0, p.durationMs));
    for (let t = src.rng.exp(p.burstEveryMs); t < p.durationMs - 10_000; t += src.rng.exp(p.burstEveryMs)) {
      traces.push(
        burst(src, src.rng.int(p.burstSize[0], p.burstSize[1]), t, src.rng.int(p.burstSpreadMs[0], p.burstSpreadMs[1])),
      );
    }
  }
  return {
    name: 'seed1-ratio',
    trace: merge(...traces),
    accounts,
    // One tier owning every slot: the first seed has no priority classes, only quotas.
    tiers: {
      standard: {
        weight: 1,
        share: 1,
        lendable: 0,
        overQuota: 'reject',
        warnRatio: 0.8,
        replyMode: 'sync',
        maxQueueWaitMs: 60_000,
      },
    },
    defaults: {
      accountModel: { rpm: p.rpm, tpm: 10_000_000, rate: p.pacePerSec, burst: p.paceBurst, reservoir: 1_000 },
      tenantModel: { rpm: p.rpm, tpm: 10_000_000 },
      tenant: { rpm: p.rpm, tpm: 10_000_000 },
    },
    gpu: { slots: p.gpuSlots, baseTokenMs: 10, queueLimit: p.gpuSlots, maxQueueWaitMs: 5_000 },
    bucketMs: 5_000,
  };
}

export const seed1Ratio: Scenario = {
  name: 'seed1-ratio',
  description: 'multi-tenant bursty traffic against fixed quotas: refused/sent for a hard limiter vs Sluice',
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? seed1Full : seed1Small;
    const world = withEngineFlags(seed1World(ctx.seed, p), ctx.flags);
    ctx.log(`seed1-ratio: ${world.trace.length} requests, ${p.tenants} tenants, ${p.gpuSlots} GPU slots`);
    const engine = { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log };
    const c = await compare(world, engine);
    // The same traffic from clients that never resend, to show what the retries add.
    ctx.log('seed1-ratio: again with clients that do not resend a refused request');
    const once = await compare(withEngineFlags(seed1World(ctx.seed, { ...p, clientRetry: null }), ctx.flags), engine);
    // Quota refusals are the same rule in every system; the rest refused requests within quota.
    const quota = (r: SystemReport) =>
      Object.entries(r.refusalsByReason)
        .filter(([k]) => k.startsWith('limit:'))
        .reduce((n, [, v]) => n + v, 0);
    const gpuOverload = (r: SystemReport) => r.gpu.refused429 + r.gpu.refused503 + r.gpu.queuedAtGpu;
    const failed = (r: SystemReport) => r.total.requests - Math.round(r.total.requestSuccessRate * r.total.requests);
    const specs: FigureSpec[] = [
      {
        name: 'RefusedRatio',
        label: 'rate-limited ratio (refused / sent)',
        figure: (r) => r.refusedRatio,
        better: 'lower',
        format: pct,
      },
      { name: 'Refused', label: 'attempts refused', figure: (r) => r.total.refused, better: 'lower' },
      { name: 'RequestsFailed', label: 'requests failed (last attempt refused)', figure: failed, better: 'lower' },
      { name: 'QuotaRefusals', label: 'refused by a quota', figure: quota, better: 'lower' },
      {
        name: 'WithinQuotaRefusals',
        label: 'refused within quota (GPU, expired, client timeout)',
        figure: (r) => r.total.refused - quota(r),
        better: 'lower',
      },
      {
        name: 'GpuOverload',
        label: 'GPU overload (refused + queued inside the GPU)',
        figure: gpuOverload,
        better: 'lower',
      },
    ];
    const ratio = compareFigure(c, (r) => r.refusedRatio, 'lower');
    const onceRatio = compareFigure(once, (r) => r.refusedRatio, 'lower');
    /** How many times lower Sluice's rate-limited ratio is than `baseline`'s; null when Sluice refused nothing. */
    const lowerBy = (sluice: number, baseline: number) =>
      sluice > 0 ? Math.round((baseline / sluice) * 10) / 10 : null;
    const headline = {
      requests: c.world.requests,
      shallowSent: c.baselines.shallow.total.sent,
      sluiceSent: c.sluice.total.sent,
      ...headlineOf(c, specs),
      /** The seed's claim, against today's baseline (shallow GPU queue). */
      refusalReductionVsShallow: lowerBy(ratio.sluice, ratio.baselines.shallow),
      /** The same against the baseline with the lowest ratio; below 1 means Sluice refuses more. */
      refusalReductionVsBest: lowerBy(ratio.sluice, ratio.best),
      sluiceWaitP50Ms: c.sluice.total.waitMs.p50,
      sluiceWaitP99Ms: c.sluice.total.waitMs.p99,
      ...feltHeadline(c),
      noRetrySluiceRefusedRatio: onceRatio.sluice,
      noRetryShallowRefusedRatio: onceRatio.baselines.shallow,
      noRetryBestBaselineRefusedRatio: onceRatio.best,
      noRetryBestBaselineRefusedRatioIs: onceRatio.bestIs,
      noRetryRefusalReductionVsShallow: lowerBy(onceRatio.sluice, onceRatio.baselines.shallow),
      noRetryRefusalReductionVsBest: lowerBy(onceRatio.sluice, onceRatio.best),
    };
    const ratioRow = (label: string, v: typeof ratio) => [
      label,
      ...BASELINES.map((b) => pct(v.baselines[b])),
      pct(v.sluice),
      times(lowerBy(v.sluice, v.baselines.shallow)),
      `${times(lowerBy(v.sluice, v.best))} (${v.bestIs})`,
    ];
    const ratioTable: Table = {
      title: 'rate-limited ratio (refused attempts / attempts sent)',
      columns: [
        'clients',
        ...BASELINES.map((b) => SYSTEM_LABELS[b]),
        'Sluice',
        'Sluice lower than shallow by',
        'Sluice lower than best baseline by',
      ],
      rows: [
        ratioRow('OpenAI SDK defaults (2 resends, Retry-After honored)', ratio),
        ratioRow('never resend', onceRatio),
      ],
    };
    return {
      scenario: 'seed1-ratio',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        ...p,
        clientRetry: p.clientRetry === undefined ? OPENAI_SDK_RETRY : p.clientRetry,
        tier: 'standard (share 1, maxQueueWaitMs 60 s)',
        gpu: world.gpu,
        tokensPerRequest: '32..96 uniform',
        ...baselineParams(world, c),
        priorityNote: 'one tier: every request has the same priority, so the priority baseline runs as FCFS',
      },
      headline,
      tables: [ratioTable, ...comparisonTables(c, specs)],
      details: {
        noRetry: Object.fromEntries([
          ...BASELINES.map((b) => [b, summary(once.baselines[b])] as const),
          ['sluice', summary(once.sluice)],
        ]),
      },
      comparison: c,
    };
  },
};

const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
const times = (x: number | null) => (x === null ? 'refused nothing' : `${x}x`);
const summary = (r: SystemReport) => ({
  sent: r.total.sent,
  refused: r.total.refused,
  refusedRatio: r.refusedRatio,
  refusalsByReason: r.refusalsByReason,
});
