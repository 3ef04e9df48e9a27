/**
 * slots-from-metrics: the second seed's campaign on a model whose declared slots are
 * wrong, as they are when a GPU is replaced, a server's batch size is tuned, or a
 * model is moved to other hardware: half the slots the GPU has, and twice. Each run
 * once with the declared slots trusted, once with the slots taken from the
 * simulated GPU's vLLM-style metrics (policy `saturation`), beside the run with the
 * slots declared right and the hard-limiter baseline (which declares no slots).
 *
 * What to look for: too few trusted slots leave the GPU idle while work waits; too
 * many queue requests inside the GPU, where Sluice's order (realtime first) no
 * longer holds, and the GPU refuses what waits there too long. Read from the
 * metrics, both should come out as the right slots do.
 */
import { Saturation } from '../../lib/policy/schema.js';
import { runBaseline } from '../lib/baselines.js';
import { systemReport, tierMaxWait, type SystemReport } from '../lib/compare.js';
import { embeddedEngine } from '../lib/engine.js';
import { isOk, round } from '../lib/recorder.js';
import { runSluice, type SystemRun } from '../lib/systems.js';
import { ms, pct } from '../lib/versus.js';
import { withEngineFlags, worldPolicy, type World } from '../lib/world.js';
import { burstUtilization, seed2Full, seed2Small, seed2World } from './seed2-burst.js';
import type { Scenario, ScenarioContext, Table } from './types.js';

interface Variant {
  readonly key: string;
  readonly label: string;
  /** Declared slots as a multiple of the GPU's. */
  readonly declared: number;
  readonly fromMetrics: boolean;
}

const VARIANTS: readonly Variant[] = [
  { key: 'right', label: 'slots declared right', declared: 1, fromMetrics: false },
  { key: 'rightMetrics', label: 'declared right, read from metrics', declared: 1, fromMetrics: true },
  { key: 'half', label: 'declared half, trusted', declared: 0.5, fromMetrics: false },
  { key: 'halfMetrics', label: 'declared half, read from metrics', declared: 0.5, fromMetrics: true },
  { key: 'double', label: 'declared double, trusted', declared: 2, fromMetrics: false },
  { key: 'doubleMetrics', label: 'declared double, read from metrics', declared: 2, fromMetrics: true },
];

const declaredSlots = (v: Variant, gpuSlots: number) => Math.max(1, Math.round(v.declared * gpuSlots));

/** `--variants halfMetrics,doubleMetrics`: only those runs (on the real engine each takes the trace's length); all by default. */
function chooseVariants(flag: string | undefined): readonly Variant[] {
  if (flag === undefined) return VARIANTS;
  const byKey = new Map(VARIANTS.map((v) => [v.key, v]));
  return flag.split(',').map((key) => {
    const v = byKey.get(key.trim());
    if (!v) throw new Error(`--variants takes ${VARIANTS.map((x) => x.key).join(', ')}; got ${key}`);
    return v;
  });
}

export const slotsFromMetrics: Scenario = {
  name: 'slots-from-metrics',
  description:
    "seed2-burst on a model declared with half and twice the GPU's slots: trusted vs read from the GPU's vLLM metrics",
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? seed2Full : seed2Small;
    const base = withEngineFlags(seed2World(ctx.seed, p), ctx.flags);
    const engine = ctx.engine ?? embeddedEngine;
    const burst = { from: p.burstStartMs, to: p.burstStartMs + p.burstMs };
    const runs: { variant: Variant | undefined; run: SystemRun }[] = [];
    const chosen = chooseVariants(ctx.flags.variants);
    for (const v of chosen) {
      const slots = declaredSlots(v, p.gpuSlots);
      const world: World = { ...base, model: { slots, ...(v.fromMetrics ? { saturation: {} } : {}) } };
      ctx.log(`slots-from-metrics: ${v.label} (${slots} declared, the GPU has ${p.gpuSlots})`);
      runs.push({ variant: v, run: await runSluice(world, { engine, progress: ctx.log }) });
    }
    if (ctx.flags.variants === undefined) {
      ctx.log('slots-from-metrics: the hard-limiter baseline (no slots of its own; the GPU queues what it admits)');
      runs.push({ variant: undefined, run: await runBaseline(base, 'fcfs', { engine, progress: ctx.log }) });
    }
    const tiers = ['realtime', 'batch'];
    const endMs = Math.max(...runs.map((r) => r.run.endMs));
    const maxWait = tierMaxWait(worldPolicy(base));
    const figures = (run: SystemRun, r: SystemReport) => {
      const batch = run.recorder.attempts.filter((a) => a.tier === 'batch');
      const slots = run.slotsRead ?? [];
      const inBurst = slots.filter((s) => s.t >= burst.from && s.t < burst.to).map((s) => s.slots);
      return {
        realtimeSuccess: r.tiers.realtime!.successRate,
        realtimeWaitP99Ms: r.tiers.realtime!.waitMs.p99,
        realtimeLatencyP99Ms: r.tiers.realtime!.latencyMs.p99,
        batchAbsorbed: batch.length
          ? round(batch.filter((a) => a.status !== undefined && isOk(a.status)).length / batch.length, 4)
          : 1,
        batchDoneAtMs: Math.round(
          Math.max(0, ...batch.map((a) => (a.answeredAt ?? run.recorder.start) - run.recorder.start)),
        ),
        gpuUtilizationDuringBurst: burstUtilization(r, burst.from, burst.to),
        gpuBusyWhileSlotWaited: run.gpuWhileSlotWaited?.utilization ?? null,
        queuedInsideGpu: r.gpu.queuedAtGpu,
        gpuPeakQueue: r.gpu.peakQueue,
        gpuRefused: r.gpu.refused429 + r.gpu.refused503,
        slotChanges: slots.length,
        slotsMinInBurst: inBurst.length ? Math.min(...inBurst) : null,
        slotsMaxInBurst: inBurst.length ? Math.max(...inBurst) : null,
        slotsAtEnd: slots.at(-1)?.slots ?? null,
      };
    };
    type Figures = ReturnType<typeof figures>;
    const byKey = new Map<string, Figures>();
    for (const { variant, run } of runs)
      byKey.set(variant?.key ?? 'hardLimiter', figures(run, systemReport(run, tiers, endMs, p.gpuSlots, maxWait)));
    const f = (key: string) => byKey.get(key)!;
    const shown = [...chosen, ...(byKey.has('hardLimiter') ? [undefined] : [])];
    const headline: Record<string, number | string | null> = { requests: base.trace.length, gpuSlots: p.gpuSlots };
    for (const [key, figs] of byKey) {
      for (const [name, value] of Object.entries(figs))
        headline[`${key}${name[0]!.toUpperCase()}${name.slice(1)}`] = value;
    }
    const slotsText = (x: Figures) =>
      x.slotsMinInBurst === null
        ? '-'
        : x.slotsMinInBurst === x.slotsMaxInBurst
          ? String(x.slotsMinInBurst)
          : `${x.slotsMinInBurst}-${x.slotsMaxInBurst}`;
    const columns = shown.map((v) => v?.label ?? 'hard limiter + GPU queue (fcfs)');
    const row = (label: string, format: (x: Figures, v: Variant | undefined) => string) => [
      label,
      ...shown.map((v) => format(f(v?.key ?? 'hardLimiter'), v)),
    ];
    const table: Table = {
      title: `declared slots against the GPU's ${p.gpuSlots}: trusted, or read from its metrics`,
      columns: ['', ...columns],
      rows: [
        row('declared slots', (_, v) => (v ? String(declaredSlots(v, p.gpuSlots)) : '-')),
        row('slots in force during the burst', slotsText),
        row('slot changes', (x) => String(x.slotChanges)),
        row('realtime success', (x) => pct(x.realtimeSuccess)),
        row('realtime wait p99', (x) => ms(x.realtimeWaitP99Ms)),
        row('realtime latency p99', (x) => ms(x.realtimeLatencyP99Ms)),
        row('batch absorbed', (x) => pct(x.batchAbsorbed)),
        row('last batch answer at', (x) => `${Math.round(x.batchDoneAtMs / 1000)} s`),
        row('GPU busy during the burst', (x) => pct(x.gpuUtilizationDuringBurst)),
        row('GPU busy while requests waited for a slot', (x) =>
          x.gpuBusyWhileSlotWaited === null ? '-' : pct(x.gpuBusyWhileSlotWaited),
        ),
        row('requests queued inside the GPU', (x) => String(x.queuedInsideGpu)),
        row('GPU peak queue', (x) => String(x.gpuPeakQueue)),
        row('GPU refused (429/503)', (x) => String(x.gpuRefused)),
      ],
    };
    return {
      scenario: 'slots-from-metrics',
      seed: ctx.seed,
      size: ctx.size,
      params: {
        ...p,
        gpu: base.gpu,
        declared: Object.fromEntries(chosen.map((v) => [v.key, declaredSlots(v, p.gpuSlots)])),
        saturation: { ...Saturation.parse({}), maxSlots: '4 x declared' },
        baseline: "fcfs: the hard limiter in front of an engine queue like vLLM's default (bench/lib/baselines.ts)",
      },
      headline,
      tables: [table],
      details: {
        figures: Object.fromEntries(byKey),
        slotsRead: Object.fromEntries(
          runs.filter((r) => r.variant?.fromMetrics).map((r) => [r.variant!.key, r.run.slotsRead]),
        ),
      },
    };
  },
};
