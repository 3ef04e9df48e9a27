// A run never ends in silence: a lab run that cannot finish stops with a non-zero exit and says
// what waits on what; policies with little or no lending between tiers run to their tables.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { virtualTimeline } from '../../bench/lib/engine.js';
import { Recorder } from '../../bench/lib/recorder.js';
import { describeStall, StalledRun } from '../../bench/lib/stall.js';
import { replay, runSluice, type Outcome } from '../../bench/lib/systems.js';
import { toJsonl, type TraceEvent } from '../../bench/lib/trace.js';
import { LAB_EPOCH, LAB_MODEL, type World } from '../../bench/lib/world.js';

const run = promisify(execFile);

/** Three offline requests of one account, and a pace of one release every 2,000 s. */
const slowTrace: TraceEvent[] = [0, 100, 200].map((t) => ({
  t,
  account: 'nightly',
  tenant: 'acme',
  model: 'm',
  tokens: 50,
  tier: 'offline',
}));
const slowDefaults = {
  accountModel: { rpm: 600, tpm: 200_000, rate: 0.0005, burst: 1, reservoir: 10 },
  tenantModel: { rpm: 3000, tpm: 1_000_000 },
  tenant: { rpm: 6000, tpm: 2_000_000 },
};
const cli = (args: string[]) =>
  run('npx', ['tsx', 'bench/main.ts', ...args], { cwd: process.cwd(), timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );

const event = (t: number, account = 'a'): TraceEvent => ({ t, account, model: 'm', tokens: 10, tier: 'realtime' });
const world = (trace: TraceEvent[]): World => ({
  name: 'stall',
  trace,
  accounts: { a: { tenant: 'a', tier: 'realtime' } },
  gpu: { slots: 1 },
  bucketMs: 1_000,
});

describe('the lab’s clock', () => {
  it('counts timers of the system, not the lab’s own bookkeeping', async () => {
    const timeline = virtualTimeline(LAB_EPOCH);
    timeline.housekeeping!(1_000, () => {});
    const cancel = timeline.housekeeping!(5_000, () => {});
    expect(timeline.pendingTimers!()).toBe(0);
    timeline.clock.setTimer(2_000, () => {});
    expect(timeline.pendingTimers!()).toBe(1);
    cancel();
    await timeline.until(LAB_EPOCH + 3_000);
    expect(timeline.pendingTimers!()).toBe(0);
  });
});

describe('a replay whose clock runs out while answers are awaited', () => {
  it('stops at once and reports the stall instead of returning as if done', async () => {
    const timeline = virtualTimeline(LAB_EPOCH);
    const recorder = new Recorder(LAB_EPOCH, 1_000);
    // Request 1 waits on something nothing will ever do: no timer, no I/O.
    const send = (_e: TraceEvent, n: number): Promise<Outcome> =>
      n === 1 ? new Promise<Outcome>(() => {}) : Promise.resolve({ status: 200 });
    const out = await replay(world([event(0), event(100), event(200)]), timeline, recorder, send, () => 0);
    expect(out).toMatchObject({ stalled: 'quiet', unanswered: 1 });
    // Not after the 15 minutes a run waits for stragglers: as soon as nothing was left.
    expect(timeline.clock.now() - LAB_EPOCH).toBeLessThan(5_000);
    expect(recorder.attempts.filter((a) => a.status === undefined).map((a) => a.request)).toEqual([1]);
  });

  it('does not call a slow answer a stall while its timer is pending', async () => {
    const timeline = virtualTimeline(LAB_EPOCH);
    const recorder = new Recorder(LAB_EPOCH, 1_000);
    const send = (): Promise<Outcome> =>
      new Promise((resolve) => timeline.clock.setTimer(10 * 60_000, () => resolve({ status: 200 })));
    const out = await replay(world([event(0)]), timeline, recorder, send, () => 0);
    expect(out.stalled).toBeUndefined();
    expect(out.unanswered).toBe(0);
  });
});

describe('the diagnosis', () => {
  it('names the gate holding each unanswered request, its LiteTopic with the messages left, the GPU and the timers', () => {
    const text = describeStall({
      system: 'sluice',
      kind: 'quiet',
      atMs: 61_000,
      start: 0,
      resendsPending: 0,
      pendingTimers: 0,
      gpu: { slotsBusy: 0, slots: 4, queueLength: 0 },
      depth: (topic) => (topic === 'batch-acme-m' ? 7 : 0),
      unanswered: [
        {
          request: 1,
          tier: 'batch',
          account: 'x',
          tenant: 'acme',
          sentAt: 1_000,
          admittedAt: 1_000,
          wait: {
            liteTopic: 'batch-acme-m',
            where: { state: 'held in flow control for a GPU slot', since: 2_000 },
            away: { pace: 0, capacity: 0, paused: 0, other: 0 },
            slot: 0,
            again: { pace: 0, capacity: 0, paused: 0, other: 0, inHand: 0 },
          },
        },
        {
          request: 2,
          tier: 'batch',
          account: 'x',
          tenant: 'acme',
          sentAt: 1_500,
          admittedAt: 1_500,
          wait: {
            liteTopic: 'batch-acme-m',
            away: { pace: 0, capacity: 0, paused: 0, other: 0 },
            slot: 0,
            again: { pace: 0, capacity: 0, paused: 0, other: 0, inHand: 0 },
          },
        },
        {
          request: 3,
          tier: 'offline',
          account: 'y',
          tenant: 'zed',
          sentAt: 3_000,
          admittedAt: 3_000,
          wait: {
            liteTopic: 'offline-zed-m',
            where: { state: 'suspended: paused', since: 4_000 },
            away: { pace: 0, capacity: 0, paused: 0, other: 0 },
            slot: 0,
            again: { pace: 0, capacity: 0, paused: 0, other: 0, inHand: 0 },
          },
        },
      ],
    });
    expect(text).toContain('sluice: the run stalled at 61.0 s: 3 request(s) unanswered; nothing is left to happen');
    expect(text).toContain('flow control (waiting for a GPU slot): 1 (batch 1)');
    expect(text).toContain('the broker (never delivered): 1 (batch 1)');
    expect(text).toContain('paused tenant or account: 1 (offline 1)');
    expect(text).toContain('batch-acme-m: 2 unanswered, 7 message(s) waiting in the engine');
    expect(text).toContain('the GPU meanwhile: 0 of 4 slots busy');
    expect(text).toContain('timers pending besides the lab’s own: none');
  });
});

describe('replay from the command line', () => {
  const tiers = (lendable: number) => ({
    realtime: { weight: 6, share: 0.6, lendable, overQuota: 'reject', maxQueueWaitMs: 10_000 },
    batch: { weight: 2, share: 0.25, lendable, overQuota: 'degrade', maxQueueWaitMs: 300_000 },
    offline: { weight: 1, share: 0.15, lendable, overQuota: 'degrade', replyMode: 'async', maxQueueWaitMs: 3_600_000 },
  });
  const mixed = Array.from({ length: 240 }, (_, i) => {
    const tier = ['realtime', 'batch', 'offline'][i % 3]!;
    return { t: i * 40, account: `${tier}-${i % 4}`, model: 'm', tokens: 60 + (i % 4) * 40, tier };
  });

  it(
    'with little or no lending between tiers, runs to its tables and headline (exit 0), never ends in silence',
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-stall-'));
      writeFileSync(join(dir, 't.jsonl'), toJsonl(mixed));
      for (const lendable of [0, 0.01, 0.2]) {
        writeFileSync(join(dir, 'p.json'), JSON.stringify({ tiers: tiers(lendable) }));
        const out = await cli([
          'replay',
          '--trace',
          join(dir, 't.jsonl'),
          '--gpu-slots',
          '16',
          '--policy',
          join(dir, 'p.json'),
          '--out',
          dir,
        ]);
        expect({ lendable, code: out.code, stderr: out.code === 0 ? '' : out.stderr }).toEqual({
          lendable,
          code: 0,
          stderr: '',
        });
        expect(out.stdout).toContain('per tier');
        expect(out.stdout).toContain('where the time goes');
        const headline = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { requests: number };
        expect(headline.requests).toBe(mixed.length);
      }
    },
  );

  it(
    'a pace far slower than the traffic: the lab waits past the longest maximum wait, and what could not be released is answered expired',
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-stall-'));
      writeFileSync(join(dir, 't.jsonl'), toJsonl(slowTrace));
      writeFileSync(join(dir, 'p.json'), JSON.stringify({ defaults: slowDefaults }));
      const out = await cli(['replay', '--trace', join(dir, 't.jsonl'), '--policy', join(dir, 'p.json'), '--out', dir]);
      // Before, the lab stopped waiting 15 minutes after the last arrival and called it a stall (exit 3).
      expect(out.code).toBe(0);
      const headline = JSON.parse(out.stdout.trim().split('\n').at(-1)!) as { requests: number };
      expect(headline.requests).toBe(3);
      expect(out.stdout).toMatch(/expired\s+0\s+0\s+0\s+1/);
    },
  );

  it('a run that gives up before its answers says what waits on what', { timeout: 60_000 }, async () => {
    const slowWorld: World = {
      name: 'slow',
      trace: slowTrace.map((e) => ({ ...e, model: LAB_MODEL })),
      accounts: { nightly: { tenant: 'acme', tier: 'offline' } },
      defaults: slowDefaults,
      gpu: { slots: 1 },
      bucketMs: 1_000,
      // Shorter than the pace needs: the lab stops waiting with two requests still held.
      drainMs: 15 * 60_000,
    };
    const stalled = await runSluice(slowWorld).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(stalled).toBeInstanceOf(StalledRun);
    const diagnosis = (stalled as StalledRun).diagnosis;
    expect(diagnosis).toContain('sluice: the run stalled at');
    expect(diagnosis).toContain('2 request(s) unanswered');
    expect(diagnosis).toMatch(/pace \(Suspend\): 1 \(offline 1\)/);
    expect(diagnosis).toMatch(/offline-acme-nightly-sim_2dllm: 2 unanswered, 2 message\(s\) waiting in the engine/);
    expect(diagnosis).toContain('timers pending besides the lab’s own:');
  });
});
