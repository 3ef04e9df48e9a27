/** Side-by-side tables of a comparison (Sluice and every baseline), and a plain-text renderer. */
import { BASELINES, SYSTEM_LABELS } from './baselines.js';
import type { Comparison, SystemReport } from './compare.js';
import type { Percentiles } from './recorder.js';
import { compareFigure, ms, pct, type FigureSpec } from './versus.js';
import type { Table } from '../scenarios/types.js';
import { AGAIN_CAUSES, SPLIT_PARTS, type AgainCause, type SplitPart } from './wait-split.js';

/** Every system of a comparison, baselines first, each with its table label. */
export function systems(c: Comparison): [string, SystemReport][] {
  return [
    ...BASELINES.map((b): [string, SystemReport] => [SYSTEM_LABELS[b], c.baselines[b]]),
    [SYSTEM_LABELS.sluice, c.sluice],
  ];
}

const p50p99 = (p: Percentiles) => `${ms(p.p50)} / ${ms(p.p99)}`;

export function overviewTable(c: Comparison): Table {
  const all = systems(c);
  const row = (label: string, f: (r: SystemReport) => string | number): (string | number)[] => [
    label,
    ...all.map(([, r]) => f(r)),
  ];
  return {
    title: `${c.world.name}: ${c.world.requests} requests over ${ms(c.world.durationMs)}, ${c.world.tenants} tenants, ${c.world.accounts} accounts, ${c.world.gpuSlots} GPU slots; Sluice: ${c.world.workers} workers, ${c.world.inFlightPerTopic} in flight per LiteTopic; clients give up after ${ms(c.world.clientTimeoutMs)}`,
    columns: ['', ...all.map(([name]) => name)],
    rows: [
      row('attempts sent', (r) => r.total.sent),
      row('served (2xx)', (r) => r.total.ok),
      row('refused (any non-2xx)', (r) => r.total.refused),
      row('rate-limited ratio', (r) => pct(r.refusedRatio)),
      row('GPU refused (429/503)', (r) => r.gpu.refused429 + r.gpu.refused503),
      row('queued inside the GPU', (r) => r.gpu.queuedAtGpu),
      row('GPU peak queue', (r) => r.gpu.peakQueue),
      row('GPU utilization', (r) => pct(r.gpu.utilization)),
      row('wait before GPU p50 / p99', (r) => p50p99(r.total.waitMs)),
      row('latency (served) p50 / p99', (r) => p50p99(r.total.latencyMs)),
      row('last answer at', (r) => ms(r.endMs)),
    ],
  };
}

/** Per attempt, per tier: what each system did with the attempts sent to it. */
export function tierTable(c: Comparison): Table {
  const rows: (string | number)[][] = [];
  for (const tier of c.world.tiers) {
    for (const [name, r] of systems(c)) {
      const t = r.tiers[tier]!;
      rows.push([
        tier,
        name,
        t.sent,
        t.ok,
        t.refused,
        pct(t.successRate),
        pct(t.requestSuccessRate),
        ms(t.waitMs.p50),
        ms(t.waitMs.p99),
        ms(t.latencyMs.p99),
      ]);
    }
  }
  return {
    title: 'per tier, per attempt',
    columns: [
      'tier',
      'system',
      'sent',
      'served',
      'refused',
      'success',
      'req. success',
      'wait p50',
      'wait p99',
      'latency p99',
    ],
    rows,
  };
}

/** Per request, per tier, Sluice beside every baseline: the figures users feel. */
export function feltTable(c: Comparison): Table {
  const waits = c.world.tiers
    .map((t) => `${t} ${Number.isFinite(c.world.tierMaxWaitMs[t]) ? ms(c.world.tierMaxWaitMs[t]!) : 'none'}`)
    .join(', ');
  const rows: (string | number)[][] = [];
  for (const tier of c.world.tiers) {
    for (const [name, r] of systems(c)) {
      const f = r.felt[tier]!;
      rows.push([
        tier,
        name,
        f.requests,
        pct(f.success),
        pct(f.goodput),
        p50p99(f.waitMs),
        p50p99(f.endToEndMs),
        f.ttftMs ? p50p99(f.ttftMs) : 'no streams',
        f.refusedAfterMs ? p50p99(f.refusedAfterMs) : 'none refused',
        pct(r.gpu.utilization),
      ]);
    }
  }
  return {
    title: `what users feel, per request: success (last attempt served), goodput (started within the tier's maximum wait of the first send: ${waits}), wait (first send to GPU start) and end to end (first send to answer), a request never served counting as never; time to first token (first send to the first generated text at the client) over streamed requests only (${c.world.streams ? "'no streams' where a tier sends none" : 'the trace has none'}); refused after: of the requests never served, first send to their last answer (refusal, expiry or the client giving up); GPU utilization of the whole run`,
    columns: [
      'tier',
      'system',
      'requests',
      'success',
      'goodput',
      'wait p50 / p99',
      'end to end p50 / p99',
      'TTFT p50 / p99',
      'refused after p50 / p99',
      'GPU utilization',
    ],
    rows,
  };
}

/** Each figure: Sluice, every baseline, the best baseline and whether Sluice beats it. */
export function versusTable(
  c: Comparison,
  specs: readonly FigureSpec[],
  title = 'Sluice against the best baseline, figure by figure',
): Table {
  return {
    title,
    columns: [
      'figure',
      SYSTEM_LABELS.sluice,
      ...BASELINES.map((b) => SYSTEM_LABELS[b]),
      'best baseline',
      'Sluice vs best',
    ],
    rows: specs.map((s) => {
      const v = compareFigure(c, s.figure, s.better);
      const f = s.format ?? String;
      return [s.label, f(v.sluice), ...BASELINES.map((b) => f(v.baselines[b])), v.bestIs, v.verdict];
    }),
  };
}

export function reasonsTable(c: Comparison): Table {
  const all = systems(c);
  const reasons = [...new Set(all.flatMap(([, r]) => Object.keys(r.refusalsByReason)))].sort();
  return {
    title: 'refusals by reason',
    columns: ['reason', ...all.map(([name]) => name)],
    rows: reasons.length
      ? reasons.map((reason) => [reason, ...all.map(([, r]) => r.refusalsByReason[reason] ?? 0)])
      : [['(none)', ...all.map(() => 0)]],
  };
}

/** How a wait-split part is named in a table (the lab's and the closed loop's). */
export const PART_NAMES: Readonly<Record<SplitPart, string>> = {
  edge: 'edge',
  broker: 'broker',
  suspendPace: 'Suspend: pace',
  suspendCapacity: 'Suspend: capacity',
  suspendPaused: 'Suspend: paused',
  suspendOther: 'retry / other',
  slot: 'slot',
  dispatcher: 'dispatcher',
  upstream: 'upstream',
  reply: 'reply',
};

/**
 * Where Sluice's served requests spent their time, per tier: each part's p50 / p99 and its share of
 * the summed latency (edge: send to enqueue; broker: to the first delivery; Suspend: away in the
 * LiteTopic, by cause; slot: held for a GPU slot; dispatcher: the rest before the GPU; upstream: the
 * GPU call; reply: result to answer). Every trace scenario lists it, on either engine.
 */
export function waitSplitTable(c: Comparison): Table {
  const rows: (string | number)[][] = [];
  for (const tier of c.world.tiers) {
    const split = c.sluice.tiers[tier]?.waitSplit;
    if (!split) continue;
    for (const part of SPLIT_PARTS) {
      const p = split.parts[part];
      rows.push([tier, PART_NAMES[part], ms(p.p50), ms(p.p99), pct(p.share)]);
    }
    if (split.firstTokenMs)
      rows.push([tier, 'first token (streams)', ms(split.firstTokenMs.p50), ms(split.firstTokenMs.p99), '']);
  }
  const title = `where the time goes (Sluice, ${c.engine.name} engine; served requests; share of their summed latency)`;
  return {
    title,
    columns: ['tier', 'part', 'p50', 'p99', 'share'],
    rows: rows.length ? rows : [['(none served)', '', '', '', '']],
  };
}

/** The deliveries table's column for each cause, in AGAIN_CAUSES order. */
const AGAIN_NAMES: Readonly<Record<AgainCause, string>> = {
  capacity: 'Suspend: capacity',
  pace: 'Suspend: pace',
  paused: 'Suspend: paused',
  other: 'failure / other',
  inHand: 'again in hand',
};

/**
 * How many times the engine delivered Sluice's served requests, per tier: deliveries per request,
 * and the ones after the first per request by what came before each (deliveries per completed
 * request is a bar of issue 12; this says which tier and which cause make it).
 */
export function deliveriesTable(c: Comparison): Table {
  const rows: (string | number)[][] = [];
  for (const tier of c.world.tiers) {
    const d = c.sluice.tiers[tier]?.waitSplit?.deliveries;
    if (!d) continue;
    rows.push([
      tier,
      d.mean.toFixed(3),
      d.p50,
      d.p99,
      d.max,
      ...AGAIN_CAUSES.map((cause) => d.again[cause].toFixed(3)),
    ]);
  }
  const columns = ['tier', 'mean', 'p50', 'p99', 'max', ...AGAIN_CAUSES.map((cause) => AGAIN_NAMES[cause])];
  return {
    title: `deliveries per served request (Sluice, ${c.engine.name} engine): all, and those after the first per request by what came before`,
    columns,
    rows: rows.length ? rows : [['(none served)', ...columns.slice(1).map(() => '')]],
  };
}

export function renderTable(t: Table): string {
  const cells = [t.columns.map(String), ...t.rows.map((r) => r.map(String))];
  const widths = t.columns.map((_, i) => cells.reduce((w, r) => Math.max(w, (r[i] ?? '').length), 0));
  const line = (r: readonly string[]) =>
    r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [t.title, line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join(
    '\n',
  );
}
