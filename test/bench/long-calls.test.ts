/**
 * Calls of a minute and more beside realtime far inside its reservation: offline asks 2,000-4,000
 * tokens, realtime 30-120 at 1/s, half of it streamed. With one slot kept from long borrowed calls,
 * realtime lost one request in seven on 8 slots (its requests overlapped while every other slot
 * held a call it could not outwait); on 2 slots the run never finished (a message delivered again
 * while its call was in flight waited on a clock the lab no longer advanced).
 */
import { expect, it } from 'vitest';
import { outcomes, tierFairness } from '../../bench/lib/fairness.js';
import { createRng } from '../../bench/lib/rng.js';
import { runSluice } from '../../bench/lib/systems.js';
import { burst, merge, poisson } from '../../bench/lib/trace.js';
import { replayWorld } from '../../bench/scenarios/replay.js';

function world(slots: number) {
  const rng = createRng(1);
  const accounts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const realtime = poisson(
    { rng: rng.fork('rt'), accounts: accounts('rt', 10), model: 'm', tokens: (r) => r.int(30, 120), streamShare: 0.5 },
    1,
    0,
    180_000,
  ).map((e) => ({ ...e, tier: 'realtime' }));
  const offline = burst(
    { rng: rng.fork('o'), accounts: accounts('of', 3), model: 'm', tokens: (r) => r.int(2_000, 4_000) },
    200,
    5_000,
    30_000,
  ).map((e) => ({ ...e, tier: 'offline' }));
  return replayWorld({ trace: merge(realtime, offline), flags: { 'gpu-slots': String(slots) } });
}

it(
  'beside calls longer than its maximum wait, realtime inside its reservation is all served',
  { timeout: 120_000 },
  async () => {
    const w = world(8);
    const run = await runSluice(w);
    const byTier = tierFairness(outcomes(run.recorder.attempts, w.trace, () => Infinity));
    console.log(
      `long calls, 8 slots: realtime ${byTier.realtime!.success}, offline ${byTier.offline!.success}; GPU busy while requests waited ${run.gpuWhileSlotWaited?.utilization}`,
    );
    expect(byTier.realtime!.success).toBeGreaterThanOrEqual(0.999);
    expect(byTier.offline!.success).toBe(1);
  },
);

it('on 2 slots, where neither tier fits, the run ends with every request answered', { timeout: 120_000 }, async () => {
  const w = world(2);
  const run = await runSluice(w);
  expect(run.unanswered).toBe(0);
  expect(run.recorder.attempts.length).toBeGreaterThanOrEqual(w.trace.length);
});
