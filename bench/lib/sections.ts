/**
 * The part of every trace scenario's report that does not depend on the scenario:
 * what the baselines were (params), what users feel per tier against the best
 * baseline (headline), and the side-by-side tables.
 */
import { BASELINES, baselineGpuOptions, tierPriority } from './baselines.js';
import type { Comparison } from './compare.js';
import {
  deliveriesTable,
  feltTable,
  overviewTable,
  reasonsTable,
  tierTable,
  versusTable,
  waitSplitTable,
} from './tables.js';
import { feltFigureSpecs, headlineOf, type FigureSpec } from './versus.js';
import { tierOf } from './systems.js';
import { worldPolicy, type World } from './world.js';
import type { Table } from '../scenarios/types.js';

/** What each baseline ran: the same quotas as Sluice, and its GPU queue. */
export function baselineParams(world: World, c: Comparison): Record<string, unknown> {
  const policy = worldPolicy(world);
  const priority = tierPriority(policy);
  const queue = (b: (typeof BASELINES)[number]) => {
    const o = baselineGpuOptions(world, b);
    return {
      queueLimit: o.queueLimit ?? 'unbounded',
      maxQueueWaitMs: o.maxQueueWaitMs ?? 'none',
      policy: o.queuePolicy ?? 'fcfs',
    };
  };
  return {
    quotas:
      "every baseline: the fixed windows of Sluice's policy (rpm and tpm per account x model, tenant x model and tenant, booked bursts included); " +
      "a degrade tier's account windows at the tier's hardCapFactor x quota, the hard cap Sluice enforces; 429 above any",
    clientTimeoutMs: c.world.clientTimeoutMs,
    baselines: {
      shallow: queue('shallow'),
      fcfs: queue('fcfs'),
      priority: {
        ...queue('priority'),
        priorityByTier: Object.fromEntries(c.world.tiers.map((t) => [t, priority(t)])),
      },
    },
    streams: c.world.streams
      ? streamShares(world, c.world.tiers)
      : 'no streamed requests in the trace: no time to first token',
  };
}

/** Per tier, streamed requests / requests of the trace: whose time to first token the tables show. */
function streamShares(world: World, tiers: readonly string[]): Record<string, string> {
  const count = new Map(tiers.map((t) => [t, { all: 0, streamed: 0 }]));
  for (const e of world.trace) {
    const n = count.get(tierOf(world, e));
    if (!n) continue;
    n.all++;
    if (e.stream) n.streamed++;
  }
  return Object.fromEntries([...count].map(([t, n]) => [t, `${n.streamed} of ${n.all} requests stream`]));
}

/** Headline entries (Sluice, each baseline, the best and the verdict) for the felt figures and any the scenario adds. */
export function feltHeadline(c: Comparison, extra: readonly FigureSpec[] = []): Record<string, number | string> {
  return headlineOf(c, [...extra, ...feltFigureSpecs(c)]);
}

/** The tables every trace scenario shows after its own: Sluice against the best baseline, what users feel, then the detail. */
export function comparisonTables(c: Comparison, extra: readonly FigureSpec[] = []): Table[] {
  return [
    versusTable(c, [...extra, ...feltFigureSpecs(c)]),
    feltTable(c),
    overviewTable(c),
    tierTable(c),
    reasonsTable(c),
    waitSplitTable(c),
    deliveriesTable(c),
  ];
}
