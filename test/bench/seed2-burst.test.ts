import { describe, expect, it } from 'vitest';
import { runSluice, type SystemRun } from '../../bench/lib/systems.js';
import {
  accountWaitSpreadMs,
  seed2Burst,
  seed2Full,
  seed2Small,
  seed2World,
} from '../../bench/scenarios/seed2-burst.js';
import type { Attempt } from '../../bench/lib/recorder.js';
import type { ScenarioOutput } from '../../bench/scenarios/types.js';

/** The embedded engine's deliveries per served request (the headline's deliveriesPerCompleted, unrounded). */
function deliveriesPerServed(run: SystemRun): number {
  return run.queue!.delivered / run.recorder.attempts.filter((a) => a.status === 200).length;
}

function expectSeedFigures(h: ScenarioOutput['headline']) {
  // The seed's figures, on the policy defaults (the reservoir defaults to what the LiteTopic's
  // pace releases within the batch tier's 5 min maximum wait)...
  expect(h.sluiceRealtimeSuccess as number).toBeGreaterThanOrEqual(0.995);
  expect(h.sluiceBatchAbsorbed as number).toBeGreaterThanOrEqual(0.95);
  expect(h.sluiceGpuRefused).toBe(0);
  // ...and with the campaign booked ahead (the seed's "burst quota booked before a known event").
  expect(h.bookedRealtimeSuccess as number).toBeGreaterThanOrEqual(0.995);
  expect(h.bookedBatchAbsorbed as number).toBeGreaterThanOrEqual(0.95);
  expect(h.bookedGpuRefused).toBe(0);
  // Short pace waits are held in the dispatcher, not Suspended: few redeliveries.
  expect(h.sluiceDeliveriesPerCompleted as number).toBeLessThanOrEqual(1.5);
  expect(h.bookedDeliveriesPerCompleted as number).toBeLessThanOrEqual(1.5);
  // Today's baseline (shallow GPU queue) is worse on both counts: the burst goes straight to the GPU.
  expect(h.shallowRealtimeSuccess as number).toBeLessThan(h.sluiceRealtimeSuccess as number);
  expect(h.shallowBatchAbsorbed as number).toBeLessThan(h.sluiceBatchAbsorbed as number);
  expect(h.shallowGpuRefused as number).toBeGreaterThan(0);
  // The engine-queue baselines take the whole burst into the GPU's queue: nothing refused there.
  expect(h.fcfsGpuRefused).toBe(0);
  expect(h.priorityGpuRefused).toBe(0);
}

describe('seed2-burst (full: 2,800 batch requests from 40 accounts in 3 min, 32 GPU slots)', () => {
  it(
    "the seed's bar at full size: realtime >= 99.5 %, batch >= 95 % absorbed, no GPU refusal",
    { timeout: 400_000 },
    async () => {
      const out = await seed2Burst.run({ seed: 1, size: 'full', flags: {}, log: () => {} });
      console.log(`seed2-burst full: ${JSON.stringify(out.headline)}`);
      expect(seed2Full.batchRequests).toBe(2_800);
      expect(out.headline.batchRequests).toBe(2_800);
      expectSeedFigures(out.headline);
    },
  );

  it(
    'two dispatchers of 32 workers each: the GPU stays >= 95 % busy while requests wait for a slot (seeds 1, 2)',
    { timeout: 400_000 },
    async () => {
      // 32 slots: calls holding their workers could take all 32 of one dispatcher's, leaving its
      // room one place; before calls were held to half the workers: 94.7 and 93.2 %.
      for (const seed of [1, 2]) {
        const run = await runSluice({ ...seed2World(seed, seed2Full), dispatchers: 2 });
        const busy = run.gpuWhileSlotWaited!.utilization ?? 0;
        console.log(`seed2-burst full, 2 dispatchers, seed ${seed}: GPU busy while requests waited ${busy}`);
        expect(busy).toBeGreaterThanOrEqual(0.95);
      }
    },
  );
});

// Scaled down for CI (bench/scenarios/seed2-burst.ts `seed2Small`): 700 batch requests from 10
// service accounts in 3 minutes, realtime at 0.75/s, 8 GPU slots: the full run's shape at 1/4 the
// volume and pool (full: 2,800 from 40 accounts, 3/s realtime, 32 slots).
describe('seed2-burst (small: 700 batch requests from 10 accounts, 8 GPU slots)', () => {
  it(
    'realtime stays at >= 99.5% success and >= 95% of the batch is absorbed, on defaults and with the burst booked',
    { timeout: 240_000 },
    async () => {
      const out = await seed2Burst.run({ seed: 1, size: 'small', flags: {}, log: () => {} });
      const h = out.headline;
      console.log(`seed2-burst small: ${JSON.stringify(h)}`);
      expect(seed2Small.batchRequests).toBe(700);
      expectSeedFigures(h);
    },
  );

  it(
    "two dispatchers sharing the store: the seed's bar holds, and the GPU stays busy while requests wait",
    { timeout: 240_000 },
    async () => {
      // The dispatchers book their send-backs' returns in one schedule in the store, spaced by the
      // model's starts (lib/limits/send-back.ts). Each in a schedule of its own, spaced by its own
      // share of the starts, their returns fell in and out of step.
      const out = await seed2Burst.run({ seed: 1, size: 'small', flags: { dispatchers: '2' }, log: () => {} });
      const h = out.headline;
      console.log(`seed2-burst small, 2 dispatchers: ${JSON.stringify(h)}`);
      expectSeedFigures(h);
      // The bar, over seeds 1-5: one seed's figure moves with where its last requests happen to
      // be (seed 1: 95.7 %, then 94.1 % once a lighter tier yielded to heavier tiers waiting in the other
      // dispatcher, its campaign ending with one request away in its LiteTopic while the GPU drained;
      // seeds 1-20 lie in 94.1-96.0 %). Most of the rest is the slot an active realtime keeps back from
      // long borrowed calls, an eighth of 8 slots while it holds (lib/dispatch/flow/gate-spec.ts).
      const busy = [h.sluiceGpuBusyWhileSlotWaited as number];
      const deliveries = [h.sluiceDeliveriesPerCompleted as number];
      for (const seed of [2, 3, 4, 5]) {
        const run = await runSluice({ ...seed2World(seed, seed2Small), dispatchers: 2 });
        busy.push(run.gpuWhileSlotWaited!.utilization ?? 0);
        deliveries.push(deliveriesPerServed(run));
      }
      console.log(`seed2-burst small, 2 dispatchers, GPU busy while requests waited, seeds 1-5: ${busy.join(' ')}`);
      console.log(
        `seed2-burst small, 2 dispatchers, deliveries per completed request, seeds 1-5: ${deliveries.join(' ')}`,
      );
      expect(busy.reduce((a, b) => a + b) / busy.length).toBeGreaterThanOrEqual(0.95);
      expect(Math.min(...busy)).toBeGreaterThanOrEqual(0.94);
      // Each room holds its own requests for the same slots, so beside a second dispatcher they wait
      // about twice as long: held at most 20 s, one request in five went back for its hold and
      // came again (1.42-1.46 deliveries per request, seeds 1-5; one dispatcher: 1.24-1.27). The
      // broker adds its own on top (the real engine, seed 1: 1.52), so the embedded figure keeps
      // well under the 1.5 (lib/dispatch/flow/scheduler.ts DEFAULT_HOLD_MAX_MS).
      expect(Math.max(...deliveries)).toBeLessThanOrEqual(1.35);
    },
  );
});

describe('seed2-burst, the campaign from 40 tenants instead of one (40 LiteTopics)', () => {
  it(
    'realtime keeps its workers and its success: the campaign cannot take every delivery',
    { timeout: 200_000 },
    async () => {
      const world = seed2World(1, seed2Full, false, 'each');
      const run = await runSluice(world);
      const rt = run.recorder.attempts.filter((a) => a.tier === 'realtime');
      const ok = rt.filter((a) => a.status === 200).length / rt.length;
      const batch = run.recorder.attempts.filter((a) => a.tier === 'batch');
      const delivered = deliveriesPerServed(run);
      console.log(
        `seed2-burst full, 40 campaign tenants: realtime ${ok}, batch ${batch.filter((a) => a.status === 200).length}/${batch.length}, deliveries per completed ${delivered}`,
      );
      // Before the room kept workers free, the 40 LiteTopics' messages held every worker: realtime 44.8 %.
      expect(ok).toBeGreaterThanOrEqual(0.999);
      expect(batch.every((a) => a.status === 200)).toBe(true);
      // The issue's bar: with one LiteTopic per account the 40 tenants' LiteTopics are the standard run's 40.
      expect(delivered).toBeLessThanOrEqual(1.5);
    },
  );
});

describe('accountWaitSpreadMs', () => {
  const attempt = (account: string, waitMs: number | undefined): Attempt => ({
    request: 0,
    account,
    tenant: 'marketing',
    tier: 'batch',
    sentAt: 0,
    admittedAt: 10,
    ...(waitMs === undefined ? {} : { startedAt: 10 + waitMs }),
  });

  it("is the slowest account's wait p50 less the fastest's, counting only requests that started", () => {
    const attempts = [
      ...[1_000, 2_000, 3_000].map((w) => attempt('a', w)),
      ...[40_000, 50_000, 90_000].map((w) => attempt('b', w)),
      attempt('c', undefined),
    ];
    expect(accountWaitSpreadMs(attempts)).toBe(48_000);
    expect(accountWaitSpreadMs(attempts.filter((a) => a.account === 'a'))).toBe(0);
    expect(accountWaitSpreadMs([])).toBe(0);
  });
});
