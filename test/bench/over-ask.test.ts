/**
 * Clients that ask far more than they use: realtime asks max_tokens 1,024 at 1.5/s (10 accounts),
 * batch 4,096 at 2/s (20 accounts), and 300 offline requests of 4,096 arrive at 30 s; each call
 * generates 30-300 tokens. Realtime uses about three of its four reserved slots. Taken at their
 * word, the requests counted as ten times their work: a realtime request was answered it could
 * not start in time (99.66 % served), and the GPU was 95.9 % busy while requests waited (the same
 * shape with other draws, `npm run bench -- replay --output-tokens 30-300`: 98.97 % and 93.7 %).
 */
import { expect, it } from 'vitest';
import { outcomes, tierFairness } from '../../bench/lib/fairness.js';
import { createRng } from '../../bench/lib/rng.js';
import { runSluice } from '../../bench/lib/systems.js';
import { burst, merge, poisson, type TraceEvent } from '../../bench/lib/trace.js';
import { replayWorld } from '../../bench/scenarios/replay.js';

function world() {
  const rng = createRng(1);
  const accounts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i + 1}`);
  const tier = (name: string) => (e: TraceEvent) => ({ ...e, tier: name });
  const model = 'm';
  const trace = merge(
    poisson({ rng: rng.fork('rt'), accounts: accounts('rt', 10), model, tokens: () => 1_024 }, 1.5, 0, 180_000).map(
      tier('realtime'),
    ),
    poisson({ rng: rng.fork('b'), accounts: accounts('b', 20), model, tokens: () => 4_096 }, 2, 0, 180_000).map(
      tier('batch'),
    ),
    burst({ rng: rng.fork('o'), accounts: accounts('of', 5), model, tokens: () => 4_096 }, 300, 30_000, 30_000).map(
      tier('offline'),
    ),
  );
  return replayWorld({ trace, flags: { 'gpu-slots': '8', 'output-tokens': '30-300' } });
}

it('requests asking ten times what they use are judged by what their tier uses', { timeout: 120_000 }, async () => {
  const w = world();
  const run = await runSluice(w);
  const byTier = tierFairness(outcomes(run.recorder.attempts, w.trace, () => Infinity));
  console.log(
    `over-ask: realtime ${byTier.realtime!.success}, batch ${byTier.batch!.success}, offline ${byTier.offline!.success}; GPU busy while requests waited ${run.gpuWhileSlotWaited?.utilization}`,
  );
  expect(byTier.realtime!.success).toBeGreaterThanOrEqual(0.999);
  expect(run.gpuWhileSlotWaited?.utilization).toBeGreaterThanOrEqual(0.95);
});
