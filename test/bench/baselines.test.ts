import { describe, expect, it } from 'vitest';
import { runBaseline } from '../../bench/lib/baselines.js';
import { feltFigures } from '../../bench/lib/felt.js';
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { LAB_MODEL, type World } from '../../bench/lib/world.js';

// One GPU slot, each request about a second of decode: five batch requests at once, then one realtime.
const world: World = {
  name: 'baselines',
  trace: [
    ...Array.from({ length: 5 }, () => ({ t: 0, account: 'batch-1', model: LAB_MODEL, tokens: 50 })),
    { t: 10, account: 'rt-1', model: LAB_MODEL, tokens: 50 },
  ],
  accounts: { 'batch-1': { tenant: 'b', tier: 'batch' }, 'rt-1': { tenant: 'r', tier: 'realtime' } },
  tiers: defaultTiers,
  defaults: defaultLimits,
  gpu: { slots: 1, baseTokenMs: 10, queueLimit: 1, maxQueueWaitMs: 5_000 },
  clientTimeoutMs: 2_500,
  bucketMs: 1_000,
  drainMs: 60_000,
};

const outcome = (run: Awaited<ReturnType<typeof runBaseline>>) =>
  run.recorder.attempts.map((a) => `${a.tier}:${a.status}${a.reason ? `:${a.reason}` : ''}`);

describe('the baselines on one trace', () => {
  it('shallow: the GPU queue holds one, the rest are refused at once', async () => {
    const run = await runBaseline(world, 'shallow');
    expect(outcome(run)).toEqual([
      'batch:200',
      'batch:200',
      'batch:429:gpu:429',
      'batch:429:gpu:429',
      'batch:429:gpu:429',
      'realtime:429:gpu:429',
    ]);
  });

  it('fcfs: nobody is refused by the GPU; who waits past the client timeout gives up, realtime included', async () => {
    const run = await runBaseline(world, 'fcfs');
    const out = outcome(run);
    expect(out.at(-1)).toBe('realtime:408:client-timeout');
    expect(out.filter((o) => o.endsWith('client-timeout')).length).toBeGreaterThan(1);
    expect(run.gpu.refused429 + run.gpu.refused503).toBe(0);
    // The ones that gave up left the GPU's queue: it served only those who stayed.
    expect(run.gpu.served).toBe(out.filter((o) => o.endsWith(':200')).length);
    expect(run.unanswered).toBe(0);
  });

  it('priority: realtime (priority 0) takes the first freed slot ahead of the batch queued before it', async () => {
    const run = await runBaseline(world, 'priority');
    const rt = run.recorder.attempts.find((a) => a.tier === 'realtime')!;
    expect(rt.status).toBe(200);
    const firstBatch = run.recorder.attempts.find((a) => a.tier === 'batch')!;
    // It started the moment the running batch request finished.
    expect(rt.startedAt).toBe(firstBatch.answeredAt);
    const felt = feltFigures(run.recorder.attempts, ['realtime', 'batch'], (t) => defaultTiers[t]!.maxQueueWaitMs);
    expect(felt.tiers.realtime).toMatchObject({
      requests: 1,
      success: 1,
      goodput: 1,
      ttftMs: null,
      refusedAfterMs: null,
    });
    // Batch requests that gave up count as never served: their wait p99 is endless.
    expect(felt.tiers.batch!.success).toBeLessThan(1);
    expect(felt.tiers.batch!.waitMs.p99).toBe(Infinity);
    // They learned it when their client gave up, 2.5 s after sending.
    expect(felt.tiers.batch!.refusedAfterMs).toMatchObject({ p50: 2_500, max: 2_500 });
  });
});
