/**
 * mixed-overload: the shape that showed how capacity was handed out (issue #12).
 * A diurnal base load from every tier, three overlapping bursts (one per tier,
 * each from one account of a tenant that also has a steady account), and one
 * batch tenant whose requests ask 20x the tokens of the others, on a GPU pool
 * the bursts together overload.
 *
 * Reported for Sluice and every baseline, per tier: success, goodput (served and started
 * within the tier's maximum queue wait), Jain's index over tokens served ÷ tokens
 * asked across the tier's tenants, every account's success and the worst one
 * against its tier's; GPU utilization over the whole run and while the bursts
 * overlap; deliveries per completed request (Sluice: the engine's deliveries;
 * the baselines have no queue of their own, so their attempts), each against the
 * best baseline.
 */
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { compare, deliveriesPerCompleted, type SystemReport } from '../lib/compare.js';
import type { TierFairness } from '../lib/fairness.js';
import {
  accountWaitTable,
  fairnessBySystem,
  tenantTable,
  tierFairnessTable,
  worstAccountsTable,
} from '../lib/fairness-tables.js';
import { round } from '../lib/recorder.js';
import { createRng, type Rng } from '../lib/rng.js';
import { BASELINES, SYSTEM_LABELS } from '../lib/baselines.js';
import { baselineParams, comparisonTables, feltHeadline } from '../lib/sections.js';
import type { SystemName } from '../lib/systems.js';
import { headlineEntries, pct, versusBest, type Better } from '../lib/versus.js';
import { burst, diurnal, merge, type TraceEvent } from '../lib/trace.js';
import { LAB_MODEL, withEngineFlags, type AccountSpec, type World } from '../lib/world.js';
import type { Scenario, ScenarioContext, Table } from './types.js';

export interface MixedParams {
  readonly durationMs: number;
  readonly gpuSlots: number;
  /** Scales every rate and burst size. */
  readonly volume: number;
  /** The three bursts: start and length (ms), and requests. */
  readonly bursts: Readonly<
    Record<'realtime' | 'batch' | 'offline', { readonly at: number; readonly ms: number; readonly requests: number }>
  >;
  /** How many times the tokens of the others the big batch tenant asks. */
  readonly bigFactor: number;
}

export const mixedFull: MixedParams = {
  durationMs: 600_000,
  gpuSlots: 16,
  volume: 1,
  bursts: {
    offline: { at: 60_000, ms: 240_000, requests: 1_200 },
    batch: { at: 120_000, ms: 150_000, requests: 900 },
    realtime: { at: 180_000, ms: 60_000, requests: 180 },
  },
  bigFactor: 20,
};

/** What the tests run: half the pool and volume, the same shape in half the time. */
export const mixedSmall: MixedParams = {
  durationMs: 300_000,
  gpuSlots: 8,
  volume: 0.5,
  bursts: {
    offline: { at: 30_000, ms: 120_000, requests: 600 },
    batch: { at: 60_000, ms: 75_000, requests: 450 },
    realtime: { at: 90_000, ms: 30_000, requests: 60 },
  },
  bigFactor: 20,
};

const ACCOUNTS: Readonly<Record<string, AccountSpec>> = {
  'support-steady': { tenant: 'support', tier: 'realtime' },
  'support-burst': { tenant: 'support', tier: 'realtime' },
  'analytics-0': { tenant: 'analytics', tier: 'realtime' },
  'analytics-1': { tenant: 'analytics', tier: 'realtime' },
  'marketing-steady': { tenant: 'marketing', tier: 'batch' },
  'marketing-burst': { tenant: 'marketing', tier: 'batch' },
  'research-big': { tenant: 'research', tier: 'batch' },
  'ops-0': { tenant: 'ops', tier: 'batch' },
  'etl-steady': { tenant: 'etl', tier: 'offline' },
  'etl-burst': { tenant: 'etl', tier: 'offline' },
  'archive-0': { tenant: 'archive', tier: 'offline' },
};

export function mixedWorld(seed: number, p: MixedParams): World {
  const rng = createRng(seed);
  const between = (lo: number, hi: number) => (r: Rng) => r.int(lo, hi);
  const src = (label: string, accounts: string[], tokens: (r: Rng) => number, streamShare = 0) => ({
    rng: rng.fork(label),
    accounts,
    model: LAB_MODEL,
    tokens,
    streamShare,
  });
  const v = p.volume;
  const period = p.durationMs;
  const end = p.durationMs;
  const traces: TraceEvent[][] = [
    // Base load of every tier, following the day. Realtime is chat UIs, which stream; batch and offline jobs do not.
    diurnal(
      src('rt', ['support-steady', 'analytics-0', 'analytics-1'], between(32, 128), 1),
      0.5 * v,
      2 * v,
      period,
      0,
      end,
    ),
    diurnal(src('batch', ['marketing-steady', 'ops-0'], between(64, 192)), 0.3 * v, 1.2 * v, period, 0, end),
    diurnal(
      src('big', ['research-big'], between(64 * p.bigFactor, 192 * p.bigFactor)),
      0.02 * v,
      0.08 * v,
      period,
      0,
      end,
    ),
    diurnal(src('off', ['etl-steady', 'archive-0'], between(128, 256)), 0.2 * v, 0.8 * v, period, 0, end),
    // The three bursts, each from one account of a tenant that also sends steadily.
    burst(
      src('rt-burst', ['support-burst'], between(32, 128), 1),
      p.bursts.realtime.requests,
      p.bursts.realtime.at,
      p.bursts.realtime.ms,
    ),
    burst(
      src('batch-burst', ['marketing-burst'], between(64, 192)),
      p.bursts.batch.requests,
      p.bursts.batch.at,
      p.bursts.batch.ms,
    ),
    burst(
      src('off-burst', ['etl-burst'], between(128, 256)),
      p.bursts.offline.requests,
      p.bursts.offline.at,
      p.bursts.offline.ms,
    ),
  ];
  return {
    name: 'mixed-overload',
    trace: merge(...traces),
    accounts: ACCOUNTS,
    tiers: defaultTiers,
    defaults: defaultLimits,
    // Large calls need their whole budget of max_tokens: the big tenant's account may ask for them.
    gpu: { slots: p.gpuSlots, baseTokenMs: 10, queueLimit: p.gpuSlots, maxQueueWaitMs: 5_000, maxOutputTokens: 8_192 },
    bucketMs: 5_000,
    drainMs: 60 * 60_000,
  };
}

function overlapWindow(p: MixedParams): [number, number] {
  const b = Object.values(p.bursts);
  return [Math.max(...b.map((x) => x.at)), Math.min(...b.map((x) => x.at + x.ms))];
}

function windowUtilization(r: SystemReport, [from, to]: [number, number]): number {
  const s = r.series;
  const picked = s.gpuUtilization.filter((_, i) => s.t[i]! >= from && s.t[i]! < to);
  return picked.length ? round(picked.reduce((a, b) => a + b, 0) / picked.length, 3) : 0;
}

export const mixedOverload: Scenario = {
  name: 'mixed-overload',
  description:
    'diurnal load from three tiers, three overlapping bursts, one tenant asking 20x the tokens, on an overloaded pool',
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? mixedFull : mixedSmall;
    const world = withEngineFlags(mixedWorld(ctx.seed, p), ctx.flags);
    ctx.log(`mixed-overload: ${world.trace.length} requests, ${p.gpuSlots} GPU slots`);
    const c = await compare(world, { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log });
    const systems = fairnessBySystem(c, world.trace);
    const bySystem = Object.fromEntries(systems.map((s) => [s.name, { f: s.fairness, r: s.report }])) as Record<
      SystemName,
      { f: Readonly<Record<string, TierFairness>>; r: SystemReport }
    >;
    const overlap = overlapWindow(p);
    const tiers = c.world.tiers;
    const versus = (figure: (x: (typeof bySystem)[SystemName]) => number, better: Better) =>
      versusBest(
        figure(bySystem.sluice),
        { shallow: figure(bySystem.shallow), fcfs: figure(bySystem.fcfs), priority: figure(bySystem.priority) },
        better,
      );
    const figures: [string, string, (x: (typeof bySystem)[SystemName]) => number, Better, (x: number) => string][] = [
      ...tiers.flatMap(
        (tier): [string, string, (x: (typeof bySystem)[SystemName]) => number, Better, (x: number) => string][] => [
          [
            `${cap(tier)}Jain`,
            `${tier}: Jain over tenants (tokens served / asked)`,
            (x) => x.f[tier]?.jainTokens ?? 1,
            'higher',
            (v) => v.toFixed(3),
          ],
          [
            `${cap(tier)}WorstAccountRatio`,
            `${tier}: worst account / tier success`,
            (x) => x.f[tier]?.worstAccountRatio ?? 1,
            'higher',
            (v) => v.toFixed(3),
          ],
        ],
      ),
      [
        'GpuUtilizationOverlap',
        'GPU utilization, bursts overlapping',
        (x) => windowUtilization(x.r, overlap),
        'higher',
        pct,
      ],
      [
        'DeliveriesPerCompleted',
        'deliveries (baselines: attempts) per completed request',
        (x) => deliveriesPerCompleted(x.r),
        'lower',
        String,
      ],
      ['GpuRefused', 'GPU refused (429/503)', (x) => x.r.gpu.refused429 + x.r.gpu.refused503, 'lower', String],
    ];
    const headline: Record<string, number | string> = {
      requests: c.world.requests,
      ...feltHeadline(c),
      ...Object.assign({}, ...figures.map(([name, , f, better]) => headlineEntries(name, versus(f, better)))),
    };
    const gpuTable: Table = {
      title: `fairness, GPU and deliveries against the best baseline (bursts overlap from ${overlap[0] / 1000} s to ${overlap[1] / 1000} s)`,
      columns: ['', SYSTEM_LABELS.sluice, ...BASELINES.map((b) => SYSTEM_LABELS[b]), 'best baseline', 'Sluice vs best'],
      rows: figures.map(([, label, f, better, format]) => {
        const v = versus(f, better);
        return [label, format(v.sluice), ...BASELINES.map((b) => format(v.baselines[b])), v.bestIs, v.verdict];
      }),
    };
    return {
      scenario: 'mixed-overload',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        ...p,
        accounts: ACCOUNTS,
        tiers: 'lib/policy defaults',
        limits: 'lib/policy defaults',
        gpu: world.gpu,
        ...baselineParams(world, c),
      },
      headline,
      tables: [
        tierFairnessTable(tiers, systems),
        tenantTable(tiers, systems),
        worstAccountsTable(tiers, systems, Object.keys(ACCOUNTS).length),
        accountWaitTable(tiers, systems, Object.keys(ACCOUNTS).length),
        gpuTable,
        ...comparisonTables(c),
      ],
      details: {
        fairness: Object.fromEntries(systems.map((s) => [s.name, s.fairness])),
        dispatch: c.sluice.dispatch ?? {},
      },
      comparison: c,
    };
  },
};

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
export type { TierFairness };
