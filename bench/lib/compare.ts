/**
 * Runs one world through Sluice and every baseline (baselines.ts) and puts the
 * figures side by side: the common part of every scenario report.
 */
import type { Policy } from '../../lib/policy/schema.js';
import { BASELINES, runBaseline, type BaselineName } from './baselines.js';
import { embeddedEngine, type EngineName, type LabEngine } from './engine.js';
import { feltFigures, type FeltFigures } from './felt.js';
import type { Series, TierFigures } from './recorder.js';
import { CLIENT_TIMEOUT_MS, runSluice, type GpuFigures, type SystemRun } from './systems.js';
import { inFlightPerTopicOf, worldPolicy, worldStreams, type World } from './world.js';

export interface SystemReport {
  readonly total: TierFigures;
  readonly tiers: Readonly<Record<string, TierFigures>>;
  /** What users feel, per tier and over all: success, goodput, wait and end-to-end latency per request. */
  readonly felt: Readonly<Record<string, FeltFigures>>;
  readonly feltTotal: FeltFigures;
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
    /** Each tier's maximum wait in the policy: the bound goodput is measured against. */
    readonly tierMaxWaitMs: Readonly<Record<string, number>>;
    /** Sluice's engine: messages of one LiteTopic in flight at once, and dispatcher workers. */
    readonly inFlightPerTopic: number;
    readonly workers: number;
    /** How long a client waits for one HTTP answer (every system). */
    readonly clientTimeoutMs: number;
    /** Whether the trace has streamed requests (time to first token is measured only then). */
    readonly streams: boolean;
  };
  /** What Sluice ran on: the engine, and its store, queue and result channel. */
  readonly engine: { readonly name: EngineName; readonly parts: Readonly<Record<string, string>> };
  readonly sluice: SystemReport;
  readonly baselines: Readonly<Record<BaselineName, SystemReport>>;
}

/** A comparison with the raw runs (every attempt), for figures a scenario computes itself. */
export type RunComparison = Comparison & {
  readonly runs: { readonly sluice: SystemRun; readonly baselines: Readonly<Record<BaselineName, SystemRun>> };
};

export interface CompareOptions {
  readonly engine?: LabEngine;
  readonly progress?: (line: string) => void;
}

export async function compare(world: World, options: CompareOptions = {}): Promise<RunComparison> {
  const engine = options.engine ?? embeddedEngine;
  // Every system sees the trace start at the same instant (the same wall-clock second with the real engine).
  const timeline = engine.timeline();
  const progress = options.progress ? { progress: options.progress } : {};
  const baseline = (name: BaselineName) => () =>
    runBaseline(world, name, { engine, timeline: engine.timeline(timeline.start), ...progress });
  const [sluice, [shallow, [fcfs, priority]]] = await engine.pair(
    () => runSluice(world, { engine, timeline, ...progress }),
    () => engine.pair(baseline('shallow'), () => engine.pair(baseline('fcfs'), baseline('priority'))),
  );
  const runs = { shallow, fcfs, priority };
  const policy = worldPolicy(world, timeline.start);
  const tiers = [...new Set(Object.values(world.accounts).map((a) => a.tier))].sort(tierOrder(policy));
  const maxWait = tierMaxWait(policy);
  const endMs = Math.max(sluice.endMs, ...BASELINES.map((b) => runs[b].endMs), world.trace.at(-1)?.t ?? 0);
  const report = (run: SystemRun) => systemReport(run, tiers, endMs, world.gpu.slots, maxWait);
  return {
    world: {
      name: world.name,
      requests: world.trace.length,
      durationMs: world.trace.at(-1)?.t ?? 0,
      accounts: Object.keys(world.accounts).length,
      tenants: new Set(Object.values(world.accounts).map((a) => a.tenant)).size,
      gpuSlots: world.gpu.slots,
      tiers,
      tierMaxWaitMs: Object.fromEntries(tiers.map((t) => [t, maxWait(t)])),
      inFlightPerTopic: sluice.inFlightPerTopic ?? inFlightPerTopicOf(world),
      workers: world.workers ?? 64,
      clientTimeoutMs: world.clientTimeoutMs ?? CLIENT_TIMEOUT_MS,
      streams: worldStreams(world),
    },
    engine: { name: engine.name, parts: sluice.parts ?? {} },
    sluice: report(sluice),
    baselines: { shallow: report(shallow), fcfs: report(fcfs), priority: report(priority) },
    runs: { sluice, baselines: runs },
  };
}

/** A tier's maximum queue wait in the policy; a tier it lacks has none. */
export function tierMaxWait(policy: Policy): (tier: string) => number {
  return (tier) => (Object.hasOwn(policy.tiers, tier) ? policy.tiers[tier]!.maxQueueWaitMs : Infinity);
}

/**
 * Broker round trips per served request: the engine's deliveries (each Suspend is one more);
 * a baseline has no queue, so its attempts.
 */
export function deliveriesPerCompleted(r: SystemReport): number {
  // The real engine has no queue figures: what reached the dispatcher's handler counts instead.
  const delivered = r.queue?.delivered ?? r.dispatch?.delivered ?? r.total.sent;
  return r.total.ok ? Math.round((delivered / r.total.ok) * 1e3) / 1e3 : 0;
}

/** The figures of one run; `endMs` is where its series stop (the same for every system of a comparison). */
export function systemReport(
  run: SystemRun,
  tiers: readonly string[],
  endMs: number,
  slots: number,
  maxWaitMs: (tier: string) => number,
): SystemReport {
  const total = run.recorder.total();
  const felt = feltFigures(run.recorder.attempts, tiers, maxWaitMs);
  return {
    total,
    tiers: run.recorder.figures(tiers),
    felt: felt.tiers,
    feltTotal: felt.total,
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
  return (a: string, b: string) =>
    (policy.tiers[b]?.weight ?? 0) - (policy.tiers[a]?.weight ?? 0) || (a < b ? -1 : a > b ? 1 : 0);
}
