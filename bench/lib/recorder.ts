/**
 * What one system did with a trace, measured the same way for Sluice and the
 * baseline: every attempt a client made and its answer, when each request passed
 * the limiter and when it started on the GPU, and GPU occupancy over time. Figures
 * and the chart's series are computed from these records after the run.
 */
import { waitSplitFigures, type WaitSplitFigures, type WaitTrace } from './wait-split.js';

export interface Attempt {
  /** Index of the trace event: retries of one request share it. */
  readonly request: number;
  readonly tier: string;
  readonly account: string;
  readonly tenant: string;
  /** The client asked for a stream (the trace event's `stream`). */
  readonly stream?: boolean;
  readonly sentAt: number;
  /** Set once answered. */
  answeredAt?: number;
  status?: number;
  /** Why it was refused: `limit:<scope>:<unit>`, `gpu:429`, `expired`, ... */
  reason?: string;
  /** When it passed the limiter / admission, if it did. */
  admittedAt?: number;
  /** When it first started on the GPU, if it did. */
  startedAt?: number;
  /** Streams: when the first chunk with generated text reached the client (stream-answer.ts). */
  firstTokenAt?: number;
  /** Sluice: what the dispatcher's events said about where its time went (wait-split.ts). */
  wait?: WaitTrace;
}

export interface Percentiles {
  readonly n: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface TierFigures {
  /** Attempts sent (a retry is another attempt). */
  readonly sent: number;
  /** Requests (first attempts) sent. */
  readonly requests: number;
  readonly admitted: number;
  readonly ok: number;
  /** Attempts answered with anything but 2xx: at the limiter, by the GPU, expired, failed. */
  readonly refused: number;
  /** ok / sent. */
  readonly successRate: number;
  /** Requests whose last attempt succeeded / requests. */
  readonly requestSuccessRate: number;
  /** Time from admission to the GPU starting it (Sluice: LiteTopic wait; baseline: the GPU's own queue). */
  readonly waitMs: Percentiles;
  /** Time from sending to the answer, successful attempts only. */
  readonly latencyMs: Percentiles;
  /** Sluice: where the served attempts' time went, part by part. */
  readonly waitSplit?: WaitSplitFigures;
}

export interface Series {
  readonly bucketMs: number;
  /** Bucket start times, ms from the start of the run. */
  readonly t: readonly number[];
  /** Per tier, per bucket: count admitted / refused / completed in the bucket; queued at its end. */
  readonly tiers: Readonly<
    Record<string, { admitted: number[]; rejected: number[]; completed: number[]; queued: number[] }>
  >;
  /** GPU busy slots / slots, averaged over each bucket. */
  readonly gpuUtilization: readonly number[];
}

export class Recorder {
  readonly attempts: Attempt[] = [];
  private readonly gpuBusy: number[] = [];

  constructor(
    readonly start: number,
    readonly bucketMs: number,
  ) {}

  attempt(a: Omit<Attempt, 'sentAt'>, sentAt: number): Attempt {
    const rec: Attempt = { ...a, sentAt };
    this.attempts.push(rec);
    return rec;
  }

  /** Busy slot-ms of the GPU so far, read at each bucket end. */
  gpuSample(busySlotMs: number): void {
    this.gpuBusy.push(busySlotMs);
  }

  figures(tiers: readonly string[]): Record<string, TierFigures> {
    const out: Record<string, TierFigures> = {};
    for (const tier of tiers) out[tier] = tierFigures(this.attempts.filter((a) => a.tier === tier));
    return out;
  }

  total(): TierFigures {
    return tierFigures(this.attempts);
  }

  refusalsByReason(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const a of this.attempts)
      if (a.status !== undefined && !isOk(a.status))
        out[a.reason ?? String(a.status)] = (out[a.reason ?? String(a.status)] ?? 0) + 1;
    return sortKeys(out);
  }

  series(tiers: readonly string[], endMs: number, slots: number): Series {
    const buckets = Math.max(1, Math.ceil((endMs - this.start) / this.bucketMs));
    const idx = (t: number) => Math.min(buckets - 1, Math.floor((t - this.start) / this.bucketMs));
    const zero = () => new Array<number>(buckets).fill(0);
    const perTier: Record<string, { admitted: number[]; rejected: number[]; completed: number[]; queued: number[] }> =
      {};
    for (const tier of tiers) perTier[tier] = { admitted: zero(), rejected: zero(), completed: zero(), queued: zero() };
    for (const a of this.attempts) {
      const s = perTier[a.tier];
      if (!s) continue;
      if (a.admittedAt !== undefined) s.admitted[idx(a.admittedAt)]!++;
      if (a.answeredAt !== undefined && a.status !== undefined)
        (isOk(a.status) ? s.completed : s.rejected)[idx(a.answeredAt)]!++;
      // Queued from admission until it started on the GPU (or was answered without starting).
      if (a.admittedAt !== undefined) {
        const until = a.startedAt ?? a.answeredAt ?? Infinity;
        for (let b = idx(a.admittedAt); b < buckets; b++) {
          const end = this.start + (b + 1) * this.bucketMs;
          if (until <= end) break;
          s.queued[b]!++;
        }
      }
    }
    const util: number[] = [];
    for (let b = 0; b < buckets; b++) {
      const prev = b === 0 ? 0 : (this.gpuBusy[b - 1] ?? 0);
      const cur = this.gpuBusy[b] ?? prev;
      util.push(round((cur - prev) / (this.bucketMs * slots), 3));
    }
    return {
      bucketMs: this.bucketMs,
      t: Array.from({ length: buckets }, (_, b) => b * this.bucketMs),
      tiers: perTier,
      gpuUtilization: util,
    };
  }

  /** Per account: attempts, successes, refusals. */
  accounts(): Record<string, { tier: string; sent: number; ok: number; refused: number }> {
    const out = new Map<string, { tier: string; sent: number; ok: number; refused: number }>();
    for (const a of this.attempts) {
      let r = out.get(a.account);
      if (!r) out.set(a.account, (r = { tier: a.tier, sent: 0, ok: 0, refused: 0 }));
      r.sent++;
      if (a.status !== undefined) {
        if (isOk(a.status)) r.ok++;
        else r.refused++;
      }
    }
    return sortKeys(Object.fromEntries(out));
  }
}

export const isOk = (status: number) => status >= 200 && status < 300;

function tierFigures(attempts: readonly Attempt[]): TierFigures {
  const ok = attempts.filter((a) => a.status !== undefined && isOk(a.status));
  const refused = attempts.filter((a) => a.status !== undefined && !isOk(a.status)).length;
  const waits = attempts
    .filter((a) => a.admittedAt !== undefined && a.startedAt !== undefined)
    .map((a) => a.startedAt! - a.admittedAt!);
  // Attempts are recorded in send order, so the last one of a request wins.
  const requests = new Map<number, boolean>();
  for (const a of attempts) requests.set(a.request, a.status !== undefined && isOk(a.status));
  const requestOk = [...requests.values()].filter(Boolean).length;
  return {
    sent: attempts.length,
    requests: requests.size,
    admitted: attempts.filter((a) => a.admittedAt !== undefined).length,
    ok: ok.length,
    refused,
    successRate: attempts.length ? round(ok.length / attempts.length, 4) : 1,
    requestSuccessRate: requests.size ? round(requestOk / requests.size, 4) : 1,
    waitMs: percentiles(waits),
    latencyMs: percentiles(ok.map((a) => a.answeredAt! - a.sentAt)),
    ...withSplit(waitSplitFigures(ok)),
  };
}

function withSplit(split: WaitSplitFigures | undefined): { waitSplit?: WaitSplitFigures } {
  return split ? { waitSplit: split } : {};
}

export function percentiles(values: readonly number[]): Percentiles {
  if (values.length === 0) return { n: 0, p50: 0, p90: 0, p99: 0, max: 0 };
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return { n: s.length, p50: round(at(0.5)), p90: round(at(0.9)), p99: round(at(0.99)), max: round(s[s.length - 1]!) };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
