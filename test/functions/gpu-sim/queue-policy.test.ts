import { describe, expect, it } from 'vitest';
import { chatBody, drain, lab, post, tracker } from './harness.js';

const CHAT = '/v1/chat/completions';

// The engine-queue modes the lab's baselines run: vLLM's unbounded waiting queue, FCFS or by priority.
describe('gpu-sim engine queue', () => {
  it('unbounded and without a timeout: everyone waits, in arrival order, and the wait grows with the queue', async () => {
    const { clock, sim } = lab({
      slots: 2,
      queueLimit: null,
      maxQueueWaitMs: null,
      baseTokenMs: 20,
      minOutputTokens: 64,
      maxOutputTokens: 64,
    });
    const t0 = clock.now();
    const track = tracker(clock);
    const pending = [];
    for (let i = 0; i < 60; i++) {
      pending.push(track(post(sim, CHAT, chatBody(`request ${i}`, { max_tokens: 64 }))));
      await clock.advance(0);
    }
    expect(sim.stats()).toMatchObject({ slotsBusy: 2, queueLength: 58, queueLimit: null });
    await drain(clock, 3_600_000);
    const done = await Promise.all(pending);
    expect(done.map((d) => d.res.status)).toEqual(Array(60).fill(200));
    expect(done.map((d) => d.order)).toEqual([...Array(60).keys()]);
    const waits = done.map((d) => Number(d.res.headers.get('x-sim-queue-ms')));
    // Each pair waits for the pairs ahead of it: no 503 however long, and later means longer.
    for (let i = 2; i < waits.length; i++) expect(waits[i]!).toBeGreaterThan(waits[i - 2]!);
    expect(waits.at(-1)!).toBeGreaterThan(5_000);
    expect(done.at(-1)!.at - t0).toBeGreaterThan(waits.at(-1)!);
    expect(sim.stats()).toMatchObject({ served: 60, rejected429: 0, rejected503: 0, peakQueue: 58 });
  });

  it('a client that gives up leaves the queue (499) and the ones behind it move up', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: null, maxQueueWaitMs: null });
    const t0 = clock.now();
    const track = tracker(clock);
    const first = track(post(sim, CHAT, chatBody('runs')));
    await clock.advance(0);
    const impatient = new AbortController();
    const gone = track(post(sim, CHAT, chatBody('gives up'), impatient.signal));
    await clock.advance(0);
    const patient = track(post(sim, CHAT, chatBody('waits')));
    await clock.advance(0);
    expect(sim.stats().queueLength).toBe(2);
    impatient.abort();
    await clock.advance(0);
    expect(sim.stats()).toMatchObject({ queueLength: 1, aborted: 1 });
    await drain(clock);
    const [a, b, c] = await Promise.all([first, gone, patient]);
    expect([a.res.status, b.res.status, c.res.status]).toEqual([200, 499, 200]);
    // The patient one started the moment the first finished.
    expect(t0 + Number(c.res.headers.get('x-sim-queue-ms'))).toBe(a.at);
  });

  it('priority: a freed slot goes to the lowest priority value, ties by arrival; running ones are not preempted', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: null, maxQueueWaitMs: null, queuePolicy: 'priority' });
    const track = tracker(clock);
    const sent: Record<string, Promise<{ res: Response; at: number; order: number }>> = {};
    for (const [name, priority] of [
      ['X', 5],
      ['A', 2],
      ['B', 0],
      ['C', 1],
      ['D', 0],
      ['E', 2],
    ] as const) {
      sent[name] = track(post(sim, CHAT, chatBody(`prompt ${name}`, { priority })));
      await clock.advance(0);
    }
    await drain(clock);
    const order = Object.entries(
      await Promise.all(Object.values(sent)).then((d) =>
        Object.fromEntries(Object.keys(sent).map((k, i) => [k, d[i]!])),
      ),
    )
      .sort(([, a], [, b]) => a.order - b.order)
      .map(([name, d]) => `${name}${d.res.status}`);
    // X was running when the others came: it finishes first, whatever its priority.
    expect(order).toEqual(['X200', 'B200', 'D200', 'C200', 'A200', 'E200']);
  });

  it('fcfs does not drop a priority silently: a non-zero one is refused with 400, as vLLM does without priority scheduling', async () => {
    const { sim } = lab({ queuePolicy: 'fcfs' });
    const refused = await post(sim, CHAT, chatBody('urgent', { priority: -1 }));
    expect(refused.status).toBe(400);
    expect((await refused.json()).error).toMatchObject({
      type: 'invalid_request_error',
      code: 'priority_not_enabled',
      param: 'priority',
    });
    const bad = await post(sim, CHAT, chatBody('urgent', { priority: 'high' }));
    expect(bad.status).toBe(400);
    const { clock, sim: sim2 } = lab({ queuePolicy: 'fcfs' });
    const zero = post(sim2, CHAT, chatBody('ordinary', { priority: 0 }));
    await drain(clock);
    expect((await zero).status).toBe(200);
  });
});
