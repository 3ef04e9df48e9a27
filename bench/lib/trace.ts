/**
 * Traffic traces: what clients send and when. Built-in generators (Poisson base
 * load, bursts, a diurnal shape, retry loops) or a JSONL file, one request a line:
 *   {"t": 1250, "account": "app-1", "model": "sim-llm", "tokens": 200, "tier": "realtime", "stream": true}
 * `t` is milliseconds from the start of the trace (a number) or an ISO timestamp
 * (the first line's is the start); `tenant` is optional (default: the account);
 * `stream` is optional (default false): the client asks for an SSE stream, as a chat
 * UI does, and the lab measures its time to first token. `omits_max_tokens` is optional
 * (default false): the client leaves max_tokens out, and the request generates what the
 * simulated model wants to say (replay's --output-tokens) whatever its `tokens`.
 * `prompt_tokens` is optional (default: a few): how long its prompt is, as a request that
 * carries retrieved documents sends thousands.
 */
import { z } from 'zod';
import { PolicyName } from '../../lib/policy/schema.js';
import type { Rng } from './rng.js';

/** How the client behind a request reacts to a refusal (429, 503, 504, 502). */
export interface RetryBehavior {
  /** Delay before sending again (the first resend's, with exponential backoff). */
  readonly delayMs: number;
  /** Most sends of the same request, the first included. */
  readonly maxAttempts: number;
  /** Honor Retry-After when the server sends one (a well-behaved client). */
  readonly honorRetryAfter?: boolean;
  /** Retry-After at or above this is not honored; the backoff applies instead. */
  readonly maxRetryAfterMs?: number;
  /** Double the delay after each resend, up to `maxDelayMs`. */
  readonly exponential?: boolean;
  readonly maxDelayMs?: number;
  /** Take up to this share off each delay at random (0.25: up to 25 % shorter). */
  readonly jitter?: number;
}

/**
 * What the official OpenAI SDKs do by default (openai-node `maxRetries: 2`,
 * `calculateDefaultRetryTimeoutMillis`): resend 429 and 5xx twice, after the server's
 * Retry-After when it is under 60 s, else after min(0.5 s x 2^n, 8 s) less up to 25 %.
 */
export const OPENAI_SDK_RETRY: RetryBehavior = {
  delayMs: 500,
  maxAttempts: 3,
  honorRetryAfter: true,
  maxRetryAfterMs: 60_000,
  exponential: true,
  maxDelayMs: 8_000,
  jitter: 0.25,
};

/**
 * How long a client waits before resending after its `attempt`-th send was refused.
 * `draw` in [0, 1) picks the jitter, so a replay stays deterministic.
 */
export function retryDelayMs(
  retry: RetryBehavior,
  attempt: number,
  retryAfterMs: number | undefined,
  draw: number,
): number {
  if (
    retry.honorRetryAfter &&
    retryAfterMs !== undefined &&
    retryAfterMs >= 0 &&
    retryAfterMs < (retry.maxRetryAfterMs ?? Infinity)
  )
    return retryAfterMs;
  const base = retry.exponential
    ? Math.min(retry.delayMs * 2 ** (attempt - 1), retry.maxDelayMs ?? Infinity)
    : retry.delayMs;
  return base * (1 - (retry.jitter ?? 0) * draw);
}

export interface TraceEvent {
  /** Milliseconds from the start of the run. */
  readonly t: number;
  readonly account: string;
  readonly model: string;
  /** Completion tokens asked for (max_tokens); the simulated GPU generates exactly this many. */
  readonly tokens: number;
  readonly tier?: string;
  readonly tenant?: string;
  readonly retry?: RetryBehavior;
  /** The client asks for `stream: true` and reads the answer chunk by chunk (time to first token is measured). */
  readonly stream?: boolean;
  /**
   * The client leaves max_tokens out, as chat UIs often do: Sluice estimates the model's
   * default, and the simulated GPU generates what the model wants to say (its output length).
   */
  readonly omitsMaxTokens?: boolean;
  /** Tokens of its prompt (default: a few): a retrieval-augmented request sends thousands. */
  readonly promptTokens?: number;
}

export interface Source {
  readonly rng: Rng;
  readonly accounts: readonly string[];
  readonly model: string;
  /** Tokens per request. */
  readonly tokens: (rng: Rng) => number;
  readonly retry?: RetryBehavior;
  /**
   * Share of this source's requests that stream, in [0, 1] (default 0). A share strictly
   * between 0 and 1 is drawn from a generator of its own, so adding streams to a source
   * leaves its arrival times, accounts and tokens as they were.
   */
  readonly streamShare?: number;
}

/** Homogeneous Poisson arrivals at `perSec` between `from` and `to` (ms), accounts picked at random. */
export function poisson(source: Source, perSec: number, from: number, to: number): TraceEvent[] {
  const out: TraceEvent[] = [];
  if (perSec <= 0) return out;
  const { rng } = source;
  const streams = streamPicker(source, from);
  for (let t = from + rng.exp(1000 / perSec); t < to; t += rng.exp(1000 / perSec)) out.push(event(source, t, streams));
  return out;
}

/** `count` requests spread uniformly at random over [at, at + spreadMs). */
export function burst(source: Source, count: number, at: number, spreadMs: number): TraceEvent[] {
  const out: TraceEvent[] = [];
  const streams = streamPicker(source, at);
  for (let i = 0; i < count; i++) out.push(event(source, at + source.rng.next() * spreadMs, streams));
  return out.sort((a, b) => a.t - b.t);
}

/**
 * A day's shape compressed into `periodMs`: the rate follows a cosine between
 * `troughPerSec` and `peakPerSec` (peak at mid-period), by thinning a Poisson process.
 */
export function diurnal(
  source: Source,
  troughPerSec: number,
  peakPerSec: number,
  periodMs: number,
  from: number,
  to: number,
): TraceEvent[] {
  const out: TraceEvent[] = [];
  const { rng } = source;
  const streams = streamPicker(source, from);
  const rateAt = (t: number) =>
    troughPerSec + ((peakPerSec - troughPerSec) * (1 - Math.cos((2 * Math.PI * (t - from)) / periodMs))) / 2;
  for (let t = from + rng.exp(1000 / peakPerSec); t < to; t += rng.exp(1000 / peakPerSec)) {
    if (rng.next() < rateAt(t) / peakPerSec) out.push(event(source, t, streams));
  }
  return out;
}

/**
 * A client stuck in a retry loop: it sends `perSec` requests from `from` to `to` and
 * resends every refusal after `delayMs`, ignoring Retry-After, up to `maxAttempts`.
 */
export function retryLoop(
  source: Source,
  perSec: number,
  from: number,
  to: number,
  delayMs: number,
  maxAttempts = 1_000,
): TraceEvent[] {
  return poisson({ ...source, retry: { delayMs, maxAttempts, honorRetryAfter: false } }, perSec, from, to);
}

/** Merges traces into time order (ties keep the order of the arguments). */
export function merge(...traces: readonly TraceEvent[][]): TraceEvent[] {
  return traces
    .flatMap((trace, i) => trace.map((e, j) => ({ e, i, j })))
    .sort((a, b) => a.e.t - b.e.t || a.i - b.i || a.j - b.j)
    .map(({ e }) => e);
}

/**
 * Whether each next request of `source` streams; draws only for a share strictly between 0 and 1.
 * `from`: where the generator starts, so two bursts of one source do not draw alike.
 */
function streamPicker(source: Source, from: number): () => boolean {
  const share = source.streamShare ?? 0;
  if (!(share >= 0 && share <= 1)) throw new Error(`streamShare must be in [0, 1], got ${share}`);
  if (share === 0) return () => false;
  if (share === 1) return () => true;
  // Its own generator: the source's draws (times, accounts, tokens) stay what they were without streams.
  const draws = source.rng.fork(`stream@${Math.round(from)}`);
  return () => draws.next() < share;
}

function event(source: Source, t: number, streams: () => boolean): TraceEvent {
  const e: TraceEvent = {
    t: Math.round(t),
    account: source.rng.pick(source.accounts),
    model: source.model,
    tokens: source.tokens(source.rng),
    ...(source.retry ? { retry: source.retry } : {}),
  };
  return streams() ? { ...e, stream: true } : e;
}

/** A prompt's tokens at most: four characters each, it stays under the edge's default body limit (1 MiB). */
export const MAX_PROMPT_TOKENS = 200_000;

const JsonlLine = z
  .object({
    t: z.union([z.number().nonnegative(), z.string().datetime({ offset: true })]),
    // The policy's own rule: a name it would refuse (or read as Object.prototype's) never gets this far.
    account: PolicyName,
    model: PolicyName,
    tokens: z.number().int().positive(),
    tier: PolicyName.optional(),
    tenant: PolicyName.optional(),
    stream: z.boolean().optional(),
    omits_max_tokens: z.boolean().optional(),
    prompt_tokens: z.number().int().positive().max(MAX_PROMPT_TOKENS).optional(),
  })
  .strict();

/** Parses a JSONL trace; errors name the line. Times become ms from the first request. */
export function parseJsonlTrace(text: string): TraceEvent[] {
  const rows: Array<z.infer<typeof JsonlLine> & { line: number }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      throw new Error(`trace line ${i + 1}: not JSON`);
    }
    const parsed = JsonlLine.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new Error(`trace line ${i + 1}: ${issue.path.join('.') || '(line)'}: ${issue.message}`);
    }
    rows.push({ ...parsed.data, line: i + 1 });
  });
  if (rows.length === 0) throw new Error('trace is empty');
  const times = rows.map((r) => (typeof r.t === 'number' ? r.t : Date.parse(r.t)));
  const kinds = new Set(rows.map((r) => typeof r.t));
  if (kinds.size > 1) throw new Error('trace mixes numeric and ISO timestamps');
  // Not Math.min(...times): a spread of a long trace overflows the call stack.
  const start = kinds.has('string') ? times.reduce((a, b) => Math.min(a, b), Infinity) : 0;
  return merge(
    rows.map((r, i) => ({
      t: Math.round(times[i]! - start),
      account: r.account,
      model: r.model,
      tokens: r.tokens,
      ...(r.tier ? { tier: r.tier } : {}),
      ...(r.tenant ? { tenant: r.tenant } : {}),
      ...(r.stream ? { stream: true } : {}),
      ...(r.omits_max_tokens ? { omitsMaxTokens: true } : {}),
      ...(r.prompt_tokens ? { promptTokens: r.prompt_tokens } : {}),
    })),
  );
}

export function toJsonl(trace: readonly TraceEvent[]): string {
  return (
    trace
      .map((e) =>
        JSON.stringify({
          t: e.t,
          account: e.account,
          model: e.model,
          tokens: e.tokens,
          ...(e.tier ? { tier: e.tier } : {}),
          ...(e.tenant ? { tenant: e.tenant } : {}),
          ...(e.stream ? { stream: true } : {}),
          ...(e.omitsMaxTokens ? { omits_max_tokens: true } : {}),
          ...(e.promptTokens ? { prompt_tokens: e.promptTokens } : {}),
        }),
      )
      .join('\n') + '\n'
  );
}
