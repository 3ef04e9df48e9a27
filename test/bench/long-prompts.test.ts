/**
 * Realtime requests that carry retrieved documents (6,000-token prompts, answers of 50-200
 * tokens, 0.8/s from 10 accounts, inside realtime's reservation) beside batch generating
 * 500-2,000 tokens from short prompts (0.4/s) and an offline burst of 60 at 30 s, on 8 slots.
 * Timed by one rate over all tokens, a realtime call looked a minute long and a batch call a few
 * hundred ms: realtime requests were answered they could not start in time while lenders lent
 * against batch calls that then held their slots for 20 s (realtime 89.54 % served, the priority
 * baseline 100 %; `npm run bench -- replay` of the same shape).
 */
import { expect, it } from 'vitest';
import { outcomes, tierFairness } from '../../bench/lib/fairness.js';
import { createRng } from '../../bench/lib/rng.js';
import { runSluice } from '../../bench/lib/systems.js';
import { burst, merge, poisson, type TraceEvent } from '../../bench/lib/trace.js';
import { replayWorld } from '../../bench/scenarios/replay.js';

function trace(): TraceEvent[] {
  const rng = createRng(1);
  const accounts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
  const as = (tier: string, promptTokens?: number) => (e: TraceEvent) => ({
    ...e,
    tier,
    ...(promptTokens ? { promptTokens } : {}),
  });
  const model = 'm';
  const answer = (r: { next(): number }) => 50 + Math.floor(r.next() * 150);
  const story = (r: { next(): number }) => 500 + Math.floor(r.next() * 1_500);
  return merge(
    poisson({ rng: rng.fork('rt'), accounts: accounts('rt', 10), model, tokens: answer }, 0.8, 0, 180_000).map(
      as('realtime', 6_000),
    ),
    poisson({ rng: rng.fork('b'), accounts: accounts('b', 20), model, tokens: story }, 0.4, 0, 180_000).map(
      as('batch'),
    ),
    burst({ rng: rng.fork('o'), accounts: accounts('of', 5), model, tokens: story }, 60, 30_000, 30_000).map(
      as('offline'),
    ),
  );
}

it(
  'prompt and output tokens are timed apart: long prompts with short answers stay realtime',
  { timeout: 120_000 },
  async () => {
    const w = replayWorld({ trace: trace(), flags: {} });
    const run = await runSluice(w);
    const byTier = tierFairness(outcomes(run.recorder.attempts, w.trace, () => Infinity));
    console.log(
      `long prompts: realtime ${byTier.realtime!.success}, batch ${byTier.batch!.success}, offline ${byTier.offline!.success}; GPU busy while requests waited ${run.gpuWhileSlotWaited?.utilization}`,
    );
    expect(byTier.realtime!.success).toBeGreaterThanOrEqual(0.999);
    expect(byTier.batch!.success).toBe(1);
    expect(byTier.offline!.success).toBe(1);
  },
);
