import { describe, expect, it } from 'vitest';
import {
  loopSplitTable,
  loopTable,
  runClosedLoop,
  summarize,
  tailVerdict,
  throughputVerdict,
  type Answer,
  type ClosedLoopOptions,
  type LoopSummary,
} from '../../bench/lib/closed-loop.js';
import { renderTable } from '../../bench/lib/tables.js';
import { sleep } from '../../lib/clock/clock.js';
import { VirtualClock } from '../../lib/clock/virtual-clock.js';

/** Runs the loop on a virtual clock: `answer(client, n)` says how long the n-th request of a client takes and what it gets. */
async function loop(
  answer: (client: number, n: number) => { ms: number; status: Answer | Error },
  o: Omit<ClosedLoopOptions, 'now'>,
) {
  const clock = new VirtualClock(0);
  const sent = new Map<number, number>();
  const send = async (c: number): Promise<Answer> => {
    const n = sent.get(c) ?? 0;
    sent.set(c, n + 1);
    const a = answer(c, n);
    await sleep(clock, a.ms);
    if (a.status instanceof Error) throw a.status;
    return a.status;
  };
  const run = runClosedLoop(send, { ...o, now: () => clock.now() });
  await clock.runUntil((o.warmupMs ?? 0) + o.durationMs + 60_000);
  return { run: await run, sent, clock };
}

const summary = (over: Partial<LoopSummary>): LoopSummary => ({
  requests: 100,
  reqPerSec: 100,
  latencyMs: { n: 100, p50: 5, p90: 8, p99: 9, max: 10 },
  statuses: { 200: 100 },
  slow: 0,
  expired: 0,
  ...over,
});

describe('the closed-loop driver', () => {
  it('sends each client’s next request only when the last is answered, so throughput follows latency', async () => {
    const { run } = await loop((c) => ({ ms: c === 0 ? 10 : 40, status: 200 }), { clients: 2, durationMs: 1_000 });
    const byClient = (c: number) => run.samples.filter((s) => s.client === c);
    expect(byClient(0)).toHaveLength(100);
    expect(byClient(1)).toHaveLength(25);
    // Never two requests of one client out at once.
    for (const c of [0, 1]) {
      const mine = byClient(c);
      for (let i = 1; i < mine.length; i++) expect(mine[i]!.sentAt).toBeGreaterThanOrEqual(mine[i - 1]!.answeredAt);
    }
    const s = summarize(run);
    expect(s).toMatchObject({ requests: 125, reqPerSec: 125, statuses: { 200: 125 }, slow: 0, expired: 0 });
    expect(s.latencyMs).toMatchObject({ p50: 10, p99: 40, max: 40 });
  });

  it('counts nothing sent during the warm-up, and waits for the request still out at the end', async () => {
    // Sent at 0, 30, 60, 90 (warm-up), 120, 150, 180 (measured; the last answered at 210, past the window).
    const { run, sent, clock } = await loop(() => ({ ms: 30, status: 200 }), {
      clients: 1,
      durationMs: 100,
      warmupMs: 100,
    });
    expect(sent.get(0)).toBe(7);
    expect(run.samples.map((s) => s.sentAt)).toEqual([120, 150, 180]);
    expect(run.samples.at(-1)!.answeredAt).toBe(210);
    expect(clock.now()).toBeGreaterThan(210);
    const s = summarize(run);
    expect(s.requests).toBe(3);
    // Two 200s answered within the 100 ms window.
    expect(s.reqPerSec).toBe(20);
  });

  it('counts answers by status, a thrown send as an error, and only 200s as throughput', async () => {
    const statuses: (Answer | Error)[] = [200, 429, 200, 504, new Error('connection refused')];
    const { run } = await loop((_c, n) => ({ ms: 20, status: statuses[n % statuses.length]! }), {
      clients: 1,
      durationMs: 1_000,
    });
    const s = summarize(run);
    expect(s.requests).toBe(50);
    expect(s.statuses).toEqual({ 200: 20, 429: 10, 504: 10, error: 10 });
    expect(s.expired).toBe(10);
    expect(s.reqPerSec).toBe(20);
  });

  it('a send that throws before returning a promise does not end its client', async () => {
    const clock = new VirtualClock(0);
    let calls = 0;
    const send = (): Promise<Answer> => {
      calls++;
      if (calls % 2 === 1) throw new Error('bad URL');
      return sleep(clock, 50).then(() => 200);
    };
    const run = runClosedLoop(send, { clients: 1, durationMs: 500, now: () => clock.now() });
    await clock.runUntil(10_000);
    const s = summarize(await run);
    expect(s.statuses).toEqual({ 200: 10, error: 10 });
  });

  it('counts requests that took the slow threshold or longer, the boundary included', async () => {
    const times = [5, 999, 1_000, 2_500];
    const { run } = await loop((c) => ({ ms: times[c]!, status: 200 }), { clients: 4, durationMs: 3_000 });
    const s = summarize(run);
    // Client 2: 3 requests of 1 s; client 3: 2 of 2.5 s (the second answered after the window).
    expect(s.slow).toBe(3 + 2);
    expect(s.latencyMs.max).toBe(2_500);
  });
});

describe('the verdicts', () => {
  it('case A passes at 80 % of the embedded engine’s throughput and fails below', () => {
    const pass = throughputVerdict('A', summary({ reqPerSec: 500 }), summary({ reqPerSec: 400 }));
    expect(pass).toMatchObject({ pass: true, ratio: 0.8 });
    expect(pass.line).toMatch(/400 ÷ 500 = 80\.00%: PASS$/);
    const fail = throughputVerdict('A', summary({ reqPerSec: 500 }), summary({ reqPerSec: 399.5 }));
    expect(fail.pass).toBe(false);
    expect(fail.line).toMatch(/: FAIL$/);
  });

  it('case A gives no ratio when an engine was not run or the embedded one served nothing', () => {
    expect(throughputVerdict('A', summary({}), undefined)).toMatchObject({
      pass: null,
      line: expect.stringMatching(/not measured \(real engine not run\)/),
    });
    expect(throughputVerdict('A', undefined, summary({}))).toMatchObject({
      pass: null,
      line: expect.stringMatching(/embedded engine not run/),
    });
    const none = throughputVerdict('A', summary({ reqPerSec: 0 }), summary({}));
    expect(none.pass).toBe(false);
    expect(none.ratio).toBeUndefined();
  });

  it('case B passes only with no slow and no expired request on the real engine', () => {
    expect(tailVerdict('B', summary({})).pass).toBe(true);
    expect(tailVerdict('B', summary({})).line).toMatch(/: 0 and 0: PASS$/);
    expect(tailVerdict('B', summary({ slow: 1 })).pass).toBe(false);
    expect(tailVerdict('B', summary({ expired: 2, slow: 2 })).line).toMatch(/: 2 and 2: FAIL$/);
    expect(tailVerdict('B', summary({ requests: 0, statuses: {}, reqPerSec: 0 })).pass).toBe(false);
    expect(tailVerdict('B', undefined)).toMatchObject({ pass: null, line: expect.stringMatching(/not measured/) });
  });
});

describe('the table', () => {
  it('shows one row per case and engine, answers by status', () => {
    const text = renderTable(
      loopTable('closed loop', [
        { label: 'A', engine: 'embedded', clients: 8, summary: summary({ statuses: { 200: 98, 429: 2 } }) },
        {
          label: 'A',
          engine: 'real',
          clients: 8,
          summary: summary({ latencyMs: { n: 1, p50: 1.25, p90: 2, p99: 12_345, max: 12_345 } }),
        },
      ]),
    );
    expect(text.split('\n')).toHaveLength(5);
    expect(text).toContain('200×98 429×2');
    expect(text).toContain('1.3 ms');
    expect(text).toContain('12.3 s');
    // CPU not measured: said so, never a zero.
    expect(text.split('\n')[3]).toMatch(/n\/a\s+n\/a\s+n\/a$/);
  });

  it('shows CPU per request here and elsewhere, and how busy the machine was', () => {
    const text = renderTable(
      loopTable('closed loop', [
        {
          label: 'A',
          engine: 'real',
          clients: 8,
          summary: summary({}),
          cpu: { processMs: 5.004, elsewhereMs: 7.5, machineBusy: 0.974 },
        },
      ]),
    );
    expect(text.split('\n')[3]).toMatch(/5\.00\s+7\.50\s+97\.40%$/);
  });

  it('splits the time by hop, leaving out parts nothing spent time in', () => {
    const p = (p50: number, share: number) => ({ n: 1, p50, p90: p50, p99: p50, max: p50, share });
    const zero = p(0, 0);
    const parts = {
      edge: p(16, 0.2),
      broker: p(32, 0.4),
      suspendPace: zero,
      suspendCapacity: zero,
      suspendPaused: zero,
      suspendOther: zero,
      slot: zero,
      dispatcher: p(1, 0.01),
      upstream: p(28, 0.3),
      reply: p(6, 0.09),
    };
    const text = renderTable(
      loopSplitTable('split', [
        {
          label: 'A',
          engine: 'real',
          split: {
            n: 1,
            parts,
            deliveries: { ...zero, mean: 1, again: { pace: 0, capacity: 0, paused: 0, other: 0, inHand: 0 } },
          },
        },
        { label: 'A', engine: 'embedded', split: undefined },
      ]),
    );
    expect(text).toMatch(/^A\s+real\s+broker\s+32\.0 ms/m);
    expect(text).not.toContain('Suspend');
    expect(text).not.toContain('slot');
    expect(text).toContain('(no complete trace)');
    expect(text.split('\n').filter((l) => l.startsWith('A '))).toHaveLength(5 + 1);
  });
});
