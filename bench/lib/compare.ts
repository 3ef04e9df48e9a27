/**
 * Runs one world through Sluice and the baseline and puts the figures side by side:
 * the common part of every scenario report.
 */
import type { Policy } from '../../lib/policy/schema.js';
import { embeddedEngine, type EngineName, type LabEngine } from './engine.js';
import type { Series, TierFigures } from './recorder.js';
import { runBaseline, runSluice, type GpuFigures, type SystemRun } from './systems.js';
import { worldPolicy, type World } from './world.js';

export interface SystemReport {
  readonly total: TierFigures;
  readonly tiers: Readonly<Record<string, TierFigures>>;
  readonly refusalsByReason: Readonly<Record<string, number>>;
  /** Refused attempts / attempts sent: the rate-limited ratio. */
  readonly refusedRatio: number;
  readonly gpu: GpuFigures;
  readonly endMs: number;
  readonly unanswered: number;
  readonly accounts: Readonly<Record<string, { tier: string; sent: number; ok: number; refused: number }>>;
  readonly dispatch?: Readonly<Record<string, number>>;
  readonly queue?: SystemRun['queue'];
  readonly series: Series;
}

export interface Comparison {
  readonly world: {
    readonly name: string;
    readonly requests: number;
    readonly durationMs: number;
    readonly accounts: number;
    readonly tenants: number;
    readonly gpuSlots: number;
    readonly tiers: readonly string[];
    /** Sluice's engine: messages of one LiteTopic in flight at once, and dispatcher workers. */
    readonly inFlightPerTopic: number;
    readonly workers: number;
  };
  /** What Sluice ran on: the engine, and its store, queue and result channel. */
  readonly engine: { readonly name: EngineName; readonly parts: Readonly<Record<string, string>> };
  readonly sluice: SystemReport;
  readonly baseline: SystemReport;
}

/** A comparison with the raw runs (every attempt), for figures a scenario computes itself. */
export type RunComparison = Comparison & { readonly runs: { readonly sluice: SystemRun; readonly baseline: SystemRun } };

export interface CompareOptions {
  readonly engine?: LabEngine;
  readonly progress?: (line: string) => void;
}

export async function compare(world: World, options: CompareOptions = {}): Promise<RunComparison> {
  const engine = options.engine ?? embeddedEngine;
  // Both systems see the trace start at the same instant (the same wall-clock second with the real engine).
  const timeline = engine.timeline();
  const [sluice, baseline] = await engine.pair(
    () => runSluice(world, { engine, timeline, ...(options.progress ? { progress: options.progress } : {}) }),
    () => runBaseline(world, { engine, timeline: engine.timeline(timeline.start), ...(options.progress ? { progress: options.progress } : {}) }),
  );
  const policy = worldPolicy(world, timeline.start);
  const tiers = [...new Set(Object.values(world.accounts).map((a) => a.tier))].sort(tierOrder(policy));
  const endMs = Math.max(sluice.endMs, baseline.endMs, world.trace.at(-1)?.t ?? 0);
  const report = (run: SystemRun) => systemReport(run, tiers, endMs, world.gpu.slots);
  return {
    world: {
      name: world.name,
      requests: world.trace.length,
      durationMs: world.trace.at(-1)?.t ?? 0,
      accounts: Object.keys(world.accounts).length,
      tenants: new Set(Object.values(world.accounts).map((a) => a.tenant)).size,
      gpuSlots: world.gpu.slots,
      tiers,
      inFlightPerTopic: sluice.inFlightPerTopic ?? world.inFlightPerTopic ?? world.gpu.slots,
      workers: world.workers ?? 64,
    },
    engine: { name: engine.name, parts: sluice.parts ?? {} },
    sluice: report(sluice),
    baseline: report(baseline),
    runs: { sluice, baseline },
  };
}

/** The figures of one run; `endMs` is where its series stop (the same for both systems of a comparison). */
export function systemReport(run: SystemRun, tiers: readonly string[], endMs: number, slots: number): SystemReport {
  const total = run.recorder.total();
  return {
    total,
    tiers: run.recorder.figures(tiers),
    refusalsByReason: run.recorder.refusalsByReason(),
    refusedRatio: total.sent ? Math.round((total.refused / total.sent) * 1e5) / 1e5 : 0,
    gpu: run.gpu,
    endMs: run.endMs,
    unanswered: run.unanswered,
    accounts: run.recorder.accounts(),
    ...(run.dispatch ? { dispatch: run.dispatch } : {}),
    ...(run.queue ? { queue: run.queue } : {}),
    series: run.recorder.series(tiers, run.recorder.start + endMs, slots),
  };
}

/** Tiers by weight, heaviest first (realtime, batch, offline), then by name. */
function tierOrder(policy: Policy) {
  return (a: string, b: string) => (policy.tiers[b]?.weight ?? 0) - (policy.tiers[a]?.weight ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
}
