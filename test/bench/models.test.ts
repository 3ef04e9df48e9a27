/**
 * Two models on pools of their own behind one dispatcher: 120 batch accounts flood `big` (900
 * requests in 55 s, 200-600 tokens, on 8 slots) while `small` (4 slots) serves realtime at 2.5/s
 * and a little batch. The waiting room is one bound for every model; with `big`'s backlog in it,
 * `small`'s requests were sent back to their LiteTopics at the shortest Suspend while its slots
 * sat free: 93.46 % of its realtime requests served, and the GPU 88.9 % busy while requests waited
 * (each pool counted while its own model's requests waited).
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
  const flood = burst(
    { rng: rng.fork('flood'), accounts: accounts('bf', 120), model: 'big', tokens: (r) => r.int(200, 600) },
    900,
    5_000,
    55_000,
  ).map(tier('batch'));
  const realtime = poisson(
    { rng: rng.fork('srt'), accounts: accounts('srt', 5), model: 'small', tokens: (r) => r.int(20, 100) },
    2.5,
    0,
    120_000,
  ).map(tier('realtime'));
  const batch = poisson(
    { rng: rng.fork('sb'), accounts: accounts('sb', 2), model: 'small', tokens: (r) => r.int(100, 200) },
    0.5,
    0,
    120_000,
  ).map(tier('batch'));
  return replayWorld({ trace: merge(flood, realtime, batch), flags: { pools: 'big=8,small=4' } });
}

it(
  "one model's backlog does not keep another model's requests from their own free slots",
  { timeout: 120_000 },
  async () => {
    const w = world();
    const run = await runSluice(w);
    const all = outcomes(run.recorder.attempts, w.trace, (t) => (t === 'realtime' ? 10_000 : 300_000));
    const small = tierFairness(all.filter((o) => o.model === 'small'));
    const big = tierFairness(all.filter((o) => o.model === 'big'));
    console.log(
      `two models: small realtime ${small.realtime!.success}, small batch ${small.batch!.success}, big batch ${big.batch!.success}; GPU busy while requests waited ${run.gpuWhileSlotWaited?.utilization}`,
    );
    expect(small.realtime!.goodput).toBeGreaterThanOrEqual(0.999);
    expect(small.batch!.success).toBe(1);
    // Each model's pool counts only while its own requests wait: big's were waiting all along.
    expect(run.gpuWhileSlotWaited?.utilization).toBeGreaterThanOrEqual(0.95);
  },
);
