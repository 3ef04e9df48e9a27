/**
 * flood: more batch work than the GPU can start within batch's maximum wait. Many accounts of
 * one tier each send a short burst at once; the pool serves a fraction of it in time, so most
 * of it will not be served whatever the order, and what matters beside who is served is how
 * soon the others learn it (the felt table's "refused after": first send to the last answer).
 * A request refused at once can go elsewhere or come back later; one refused after its tier's
 * whole maximum wait has cost its client that wait for nothing.
 *
 * Replayed like a trace of your own (replay.ts), from a trace generated per seed.
 */
import type { Percentiles } from '../lib/recorder.js';
import { createRng } from '../lib/rng.js';
import { burst, type TraceEvent } from '../lib/trace.js';
import { ms, type FigureSpec } from '../lib/versus.js';
import { runReplay } from './replay.js';
import type { Scenario, ScenarioContext } from './types.js';

export interface FloodParams {
  readonly accounts: number;
  readonly requests: number;
  /** The burst: from `atMs`, over `forMs`. */
  readonly atMs: number;
  readonly forMs: number;
  readonly gpuSlots: number;
  /** What each request asks (prompt + max_tokens), drawn uniformly. */
  readonly tokens: readonly [number, number];
}

export const floodFull: FloodParams = {
  accounts: 60,
  requests: 900,
  atMs: 5_000,
  forMs: 50_000,
  gpuSlots: 8,
  tokens: [200, 600],
};

/** The same overload on half the pool, with half the accounts and requests. */
export const floodSmall: FloodParams = { ...floodFull, accounts: 30, requests: 450, gpuSlots: 4 };

export function floodTrace(seed: number, p: FloodParams): TraceEvent[] {
  const rng = createRng(seed);
  const accounts = Array.from({ length: p.accounts }, (_, i) => `flood-${i + 1}`);
  const [min, max] = p.tokens;
  return burst(
    { rng: rng.fork('flood'), accounts, model: 'm', tokens: (r) => r.int(min, max) },
    p.requests,
    p.atMs,
    p.forMs,
  ).map((e) => ({ ...e, tier: 'batch' }));
}

export const flood: Scenario = {
  name: 'flood',
  description: "a batch flood from many accounts beyond what the GPU starts within batch's maximum wait",
  engines: ['embedded', 'real'],
  async run(ctx: ScenarioContext) {
    const p = ctx.size === 'full' ? floodFull : floodSmall;
    const trace = floodTrace(ctx.seed, p);
    const refusedAfter = (name: string, pick: (p: Percentiles) => number): FigureSpec => ({
      name: `BatchRefusedAfter${name}Ms`,
      label: `batch: refused after ${name.toLowerCase()} (first send to the last answer of a request never served)`,
      figure: (r) => {
        const f = r.felt.batch?.refusedAfterMs;
        // None refused: nobody waited to hear a refusal.
        return f ? pick(f) : 0;
      },
      better: 'lower',
      format: ms,
    });
    const out = await runReplay({ ...ctx, trace, flags: { 'gpu-slots': String(p.gpuSlots), ...ctx.flags } }, [
      refusedAfter('P50', (f) => f.p50),
      refusedAfter('P90', (f) => f.p90),
      refusedAfter('P99', (f) => f.p99),
    ]);
    return {
      ...out,
      scenario: 'flood',
      params: {
        ...out.params,
        trace: `${p.requests} batch requests from ${p.accounts} accounts, ${p.tokens[0]}-${p.tokens[1]} tokens each, sent over ${p.forMs / 1000} s from ${p.atMs / 1000} s`,
      },
    };
  },
};
