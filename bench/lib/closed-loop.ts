/**
 * Issue 12's closed loop: each client sends its next request only once the last one was
 * answered, so throughput is bounded by latency and a slow hop anywhere shows as fewer
 * requests per second, not as a queue building up. Time and the request itself come from
 * the caller (`now`, `send`), so a test drives the loop on a virtual clock with known latencies.
 */
import type { Table } from '../scenarios/types.js';
import { percentiles, type Percentiles } from './recorder.js';
import { PART_NAMES } from './tables.js';
import { pct } from './versus.js';
import type { CpuPerRequest } from './cpu.js';
import { SPLIT_PARTS, type WaitSplitFigures } from './wait-split.js';

/** An HTTP status, or 'error' when no answer came at all (connection refused, client timeout). */
export type Answer = number | 'error';

export interface Sample {
  readonly client: number;
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly answer: Answer;
}

export interface ClosedLoopOptions {
  readonly clients: number;
  /** The measured window, after the warm-up. */
  readonly durationMs: number;
  /**
   * The loop runs but is not counted, so first connections and a fresh consumer's first
   * deliveries do not stand in for the steady state. 0 counts everything.
   */
  readonly warmupMs?: number;
  readonly now: () => number;
}

export interface ClosedLoopRun {
  /** Requests sent within the measured window, in the order they were answered. */
  readonly samples: readonly Sample[];
  readonly measureFrom: number;
  readonly endsAt: number;
}

export async function runClosedLoop(
  send: (client: number) => Promise<Answer>,
  o: ClosedLoopOptions,
): Promise<ClosedLoopRun> {
  const measureFrom = o.now() + (o.warmupMs ?? 0);
  const endsAt = measureFrom + o.durationMs;
  const samples: Sample[] = [];
  const client = async (c: number) => {
    // A request still out at the end is waited for: dropping it would hide the slowest answers.
    while (o.now() < endsAt) {
      const sentAt = o.now();
      // A send that throws before returning its promise is a failed request too, not a dead client.
      const answer = await Promise.resolve()
        .then(() => send(c))
        .catch((): Answer => 'error');
      if (sentAt >= measureFrom) samples.push({ client: c, sentAt, answeredAt: o.now(), answer });
    }
  };
  await Promise.all(Array.from({ length: o.clients }, (_, c) => client(c)));
  return { samples, measureFrom, endsAt };
}

export interface LoopSummary {
  /** Sent within the measured window. */
  readonly requests: number;
  /** Answered 200 within the window, per second of it: what the ratio compares. */
  readonly reqPerSec: number;
  /** Of every request sent in the window, whatever its answer: a 504 after the tier's wait belongs in the tail. */
  readonly latencyMs: Percentiles;
  /** Answers by status ('error': none came). */
  readonly statuses: Readonly<Record<string, number>>;
  /** Took `slowMs` or longer. */
  readonly slow: number;
  /** Answered 504: expired in the queue. */
  readonly expired: number;
}

export const SLOW_MS = 1_000;

/** Loop latencies are a few milliseconds: whole milliseconds would hide the difference between engines. */
const msText = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(1)} ms`);

export function summarize(run: ClosedLoopRun, slowMs = SLOW_MS): LoopSummary {
  const { samples, measureFrom, endsAt } = run;
  const statuses: Record<string, number> = {};
  for (const s of samples) statuses[String(s.answer)] = (statuses[String(s.answer)] ?? 0) + 1;
  const latencies = samples.map((s) => s.answeredAt - s.sentAt);
  const served = samples.filter((s) => s.answer === 200 && s.answeredAt <= endsAt).length;
  const seconds = (endsAt - measureFrom) / 1000;
  return {
    requests: samples.length,
    reqPerSec: seconds > 0 ? Math.round((served / seconds) * 10) / 10 : 0,
    latencyMs: percentiles(latencies),
    statuses: Object.fromEntries(Object.entries(statuses).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    slow: latencies.filter((l) => l >= slowMs).length,
    expired: statuses['504'] ?? 0,
  };
}

export interface Verdict {
  /** null: not measured (an engine was not run), which is neither. */
  readonly pass: boolean | null;
  readonly line: string;
}

export const THROUGHPUT_TARGET = 0.8;

/** Case A: the real engine's throughput against the embedded one's on the same loop. */
export function throughputVerdict(
  label: string,
  embedded: LoopSummary | undefined,
  real: LoopSummary | undefined,
  target = THROUGHPUT_TARGET,
): Verdict & { ratio?: number } {
  const head = `${label}: real ÷ embedded req/s (target ≥ ${Math.round(target * 100)} %)`;
  if (!embedded || !real)
    return { pass: null, line: `${head}: not measured (${!embedded ? 'embedded' : 'real'} engine not run)` };
  if (embedded.reqPerSec === 0)
    return { pass: false, line: `${head}: FAIL, the embedded engine served nothing, no ratio` };
  const ratio = real.reqPerSec / embedded.reqPerSec;
  const pass = ratio >= target;
  return {
    pass,
    ratio,
    line: `${head}: ${real.reqPerSec} ÷ ${embedded.reqPerSec} = ${pct(ratio)}: ${pass ? 'PASS' : 'FAIL'}`,
  };
}

/** Case B: on the real engine no tenant's request may be held for seconds or expire. */
export function tailVerdict(label: string, real: LoopSummary | undefined, slowMs = SLOW_MS): Verdict {
  const head = `${label}: on real, requests taking ≥ ${slowMs / 1000} s and answered 504 (target 0 and 0)`;
  if (!real) return { pass: null, line: `${head}: not measured (real engine not run)` };
  if (real.requests === 0) return { pass: false, line: `${head}: FAIL, no request was sent in the window` };
  const pass = real.slow === 0 && real.expired === 0;
  return { pass, line: `${head}: ${real.slow} and ${real.expired}: ${pass ? 'PASS' : 'FAIL'}` };
}

export interface LoopRow {
  readonly label: string;
  readonly engine: string;
  readonly clients: number;
  readonly summary: LoopSummary;
  /** CPU per served request, when measured. */
  readonly cpu?: CpuPerRequest | undefined;
}

export function loopTable(title: string, rows: readonly LoopRow[], slowMs = SLOW_MS): Table {
  const answers = (s: LoopSummary) =>
    Object.entries(s.statuses)
      .map(([status, n]) => `${status}×${n}`)
      .join(' ') || 'none';
  return {
    title,
    columns: [
      'case',
      'engine',
      'clients',
      'sent',
      'req/s (200)',
      'p50',
      'p99',
      'max',
      `≥ ${slowMs / 1000} s`,
      '504',
      'answers',
      'CPU ms/req here',
      'elsewhere',
      'machine busy',
    ],
    rows: rows.map((r) => [
      r.label,
      r.engine,
      r.clients,
      r.summary.requests,
      r.summary.reqPerSec,
      msText(r.summary.latencyMs.p50),
      msText(r.summary.latencyMs.p99),
      msText(r.summary.latencyMs.max),
      r.summary.slow,
      r.summary.expired,
      answers(r.summary),
      r.cpu ? r.cpu.processMs.toFixed(2) : 'n/a',
      r.cpu?.elsewhereMs !== undefined ? r.cpu.elsewhereMs.toFixed(2) : 'n/a',
      r.cpu?.machineBusy !== undefined ? pct(r.cpu.machineBusy) : 'n/a',
    ]),
  };
}

export interface SplitRow {
  readonly label: string;
  readonly engine: string;
  readonly split: WaitSplitFigures | undefined;
}

/**
 * Where a loop request's milliseconds went, from the dispatcher's events (wait-split.ts), per case
 * and engine: the ratio says how far the real engine is behind, this says at which hop. Parts that
 * took nothing on any row are left out.
 */
export function loopSplitTable(title: string, rows: readonly SplitRow[]): Table {
  const used = SPLIT_PARTS.filter((part) => rows.some((r) => (r.split?.parts[part].max ?? 0) > 0));
  const out: (string | number)[][] = [];
  for (const r of rows) {
    if (!r.split) {
      out.push([r.label, r.engine, '(no complete trace)', '', '', '']);
      continue;
    }
    for (const part of used) {
      const p = r.split.parts[part];
      out.push([r.label, r.engine, PART_NAMES[part], msText(p.p50), msText(p.p99), pct(p.share)]);
    }
  }
  return { title, columns: ['case', 'engine', 'part', 'p50', 'p99', 'share'], rows: out };
}
