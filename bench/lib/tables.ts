/** Side-by-side tables of a comparison, and a plain-text renderer. */
import type { Comparison, SystemReport } from './compare.js';
import type { Table } from '../scenarios/types.js';
import { SPLIT_PARTS, type SplitPart } from './wait-split.js';

const pct = (x: number) => `${(100 * x).toFixed(2)}%`;
const ms = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x)} ms`);

export function overviewTable(c: Comparison): Table {
  const row = (label: string, f: (r: SystemReport) => string | number): (string | number)[] => [label, f(c.baseline), f(c.sluice)];
  return {
    title: `${c.world.name}: ${c.world.requests} requests over ${ms(c.world.durationMs)}, ${c.world.tenants} tenants, ${c.world.accounts} accounts, ${c.world.gpuSlots} GPU slots; Sluice: ${c.world.workers} workers, ${c.world.inFlightPerTopic} in flight per LiteTopic`,
    columns: ['', 'baseline (hard limiter)', 'Sluice'],
    rows: [
      row('attempts sent', (r) => r.total.sent),
      row('served (2xx)', (r) => r.total.ok),
      row('refused (any non-2xx)', (r) => r.total.refused),
      row('rate-limited ratio', (r) => pct(r.refusedRatio)),
      row('GPU refused (429/503)', (r) => r.gpu.refused429 + r.gpu.refused503),
      row('queued inside the GPU', (r) => r.gpu.queuedAtGpu),
      row('GPU peak queue', (r) => r.gpu.peakQueue),
      row('GPU utilization', (r) => pct(r.gpu.utilization)),
      row('wait before GPU p50 / p99', (r) => `${ms(r.total.waitMs.p50)} / ${ms(r.total.waitMs.p99)}`),
      row('latency (served) p50 / p99', (r) => `${ms(r.total.latencyMs.p50)} / ${ms(r.total.latencyMs.p99)}`),
      row('last answer at', (r) => ms(r.endMs)),
    ],
  };
}

export function tierTable(c: Comparison): Table {
  const rows: (string | number)[][] = [];
  for (const tier of c.world.tiers) {
    for (const [name, r] of [['baseline', c.baseline], ['Sluice', c.sluice]] as const) {
      const t = r.tiers[tier]!;
      rows.push([tier, name, t.sent, t.ok, t.refused, pct(t.successRate), pct(t.requestSuccessRate), ms(t.waitMs.p50), ms(t.waitMs.p99), ms(t.latencyMs.p99)]);
    }
  }
  return { title: 'per tier', columns: ['tier', 'system', 'sent', 'served', 'refused', 'success', 'req. success', 'wait p50', 'wait p99', 'latency p99'], rows };
}

export function reasonsTable(c: Comparison): Table {
  const reasons = [...new Set([...Object.keys(c.baseline.refusalsByReason), ...Object.keys(c.sluice.refusalsByReason)])].sort();
  return {
    title: 'refusals by reason',
    columns: ['reason', 'baseline', 'Sluice'],
    rows: reasons.length ? reasons.map((r) => [r, c.baseline.refusalsByReason[r] ?? 0, c.sluice.refusalsByReason[r] ?? 0]) : [['(none)', 0, 0]],
  };
}

const PART_NAMES: Readonly<Record<SplitPart, string>> = {
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
    if (split.firstTokenMs) rows.push([tier, 'first token (streams)', ms(split.firstTokenMs.p50), ms(split.firstTokenMs.p99), '']);
  }
  const title = `where the time goes (Sluice, ${c.engine.name} engine; served requests; share of their summed latency)`;
  return { title, columns: ['tier', 'part', 'p50', 'p99', 'share'], rows: rows.length ? rows : [['(none served)', '', '', '', '']] };
}

export function renderTable(t: Table): string {
  const cells = [t.columns.map(String), ...t.rows.map((r) => r.map(String))];
  const widths = t.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  return [t.title, line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}
