/**
 * Sluice against the best baseline, figure by figure: for each figure, which of the
 * baselines did best, and whether Sluice did better, worse or the same. Headlines
 * and tables state every figure this way, so a win against a weak baseline cannot
 * pass for a win against the strong one.
 */
import { BASELINES, type BaselineName } from './baselines.js';
import type { Comparison, SystemReport } from './compare.js';

export type Better = 'higher' | 'lower';
export type Verdict = 'better' | 'worse' | 'tie';

export interface Versus {
  readonly sluice: number;
  readonly baselines: Readonly<Record<BaselineName, number>>;
  readonly best: number;
  /** The first baseline (in BASELINES order) with the best value. */
  readonly bestIs: BaselineName;
  readonly verdict: Verdict;
}

export function versusBest(sluice: number, baselines: Readonly<Record<BaselineName, number>>, better: Better): Versus {
  const sign = better === 'higher' ? 1 : -1;
  let bestIs: BaselineName = BASELINES[0]!;
  for (const b of BASELINES) if (sign * baselines[b] > sign * baselines[bestIs]) bestIs = b;
  const best = baselines[bestIs];
  const verdict: Verdict = sluice === best ? 'tie' : sign * sluice > sign * best ? 'better' : 'worse';
  return { sluice, baselines, best, bestIs, verdict };
}

/** A figure of each system's report, against the best baseline. */
export function compareFigure(c: Comparison, figure: (r: SystemReport) => number, better: Better): Versus {
  const { shallow, fcfs, priority } = c.baselines;
  return versusBest(
    figure(c.sluice),
    { shallow: figure(shallow), fcfs: figure(fcfs), priority: figure(priority) },
    better,
  );
}

/**
 * Headline keys of one figure `Name`: sluiceName, shallowName, fcfsName, priorityName,
 * bestBaselineName, bestBaselineNameIs (which baseline) and sluiceVsBestName (better, worse or tie).
 */
export function headlineEntries(name: string, v: Versus): Record<string, number | string> {
  return {
    [`sluice${name}`]: v.sluice,
    ...Object.fromEntries(BASELINES.map((b) => [`${b}${name}`, v.baselines[b]])),
    [`bestBaseline${name}`]: v.best,
    [`bestBaseline${name}Is`]: v.bestIs,
    [`sluiceVsBest${name}`]: v.verdict,
  };
}

export interface FigureSpec {
  /** Headline key part, e.g. `RealtimeGoodput`. */
  readonly name: string;
  /** Row label in the table. */
  readonly label: string;
  readonly figure: (r: SystemReport) => number;
  readonly better: Better;
  readonly format?: (x: number) => string;
}

/** What users feel, per tier (success, goodput, wait and end-to-end p99, TTFT p99 where it streams), and GPU utilization. */
export function feltFigureSpecs(c: Comparison): FigureSpec[] {
  const specs: FigureSpec[] = [];
  for (const tier of c.world.tiers) {
    const T = tier.charAt(0).toUpperCase() + tier.slice(1);
    specs.push(
      {
        name: `${T}Success`,
        label: `${tier}: success`,
        figure: (r) => r.felt[tier]!.success,
        better: 'higher',
        format: pct,
      },
      {
        name: `${T}Goodput`,
        label: `${tier}: goodput`,
        figure: (r) => r.felt[tier]!.goodput,
        better: 'higher',
        format: pct,
      },
      {
        name: `${T}WaitP99Ms`,
        label: `${tier}: wait p99`,
        figure: (r) => r.felt[tier]!.waitMs.p99,
        better: 'lower',
        format: ms,
      },
      {
        name: `${T}EndToEndP99Ms`,
        label: `${tier}: end to end p99`,
        figure: (r) => r.felt[tier]!.endToEndMs.p99,
        better: 'lower',
        format: ms,
      },
    );
    // Every system replays the same trace, so a tier streams in all of them or in none.
    if (c.sluice.felt[tier]?.ttftMs) {
      const label = `${tier}: time to first token p99 (streams)`;
      specs.push({
        name: `${T}TtftP99Ms`,
        label,
        figure: (r) => r.felt[tier]!.ttftMs!.p99,
        better: 'lower',
        format: ms,
      });
    }
  }
  specs.push({
    name: 'GpuUtilization',
    label: 'GPU utilization',
    figure: (r) => r.gpu.utilization,
    better: 'higher',
    format: pct,
  });
  return specs;
}

export function headlineOf(c: Comparison, specs: readonly FigureSpec[]): Record<string, number | string> {
  return Object.assign({}, ...specs.map((s) => headlineEntries(s.name, compareFigure(c, s.figure, s.better))));
}

export const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
/** Infinity: the percentile falls on requests never served. */
export const ms = (x: number) =>
  !Number.isFinite(x) ? 'never' : x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`;
