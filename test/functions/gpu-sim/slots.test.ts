import { describe, it, expect } from 'vitest';
import { chatBody, drain, lab, post, tracker } from './harness.js';

const CHAT = '/v1/chat/completions';

/** Most generations running at once, rebuilt from the responses alone (not the simulator's counters). */
function maxOverlap(intervals: { start: number; end: number }[]): number {
  const edges = intervals.flatMap((i) => [
    { t: i.start, d: 1 },
    { t: i.end, d: -1 },
  ]);
  // At equal times a slot is freed before it is handed on.
  edges.sort((a, b) => a.t - b.t || a.d - b.d);
  let cur = 0;
  let max = 0;
  for (const e of edges) {
    cur += e.d;
    max = Math.max(max, cur);
  }
  return max;
}

describe('gpu-sim slots', () => {
  it('runs at most `slots` generations at once under 50 concurrent requests', async () => {
    const { clock, sim } = lab({ slots: 8, queueLimit: 64, maxQueueWaitMs: 600_000 });
    const t0 = clock.now();
    const track = tracker(clock);
    const pending = Array.from({ length: 50 }, (_, i) => track(post(sim, CHAT, chatBody(`request number ${i}`))));

    let maxSampled = 0;
    while (sim.stats().served < 50 && clock.now() - t0 < 600_000) {
      await clock.advance(10);
      maxSampled = Math.max(maxSampled, sim.stats().slotsBusy);
    }
    await drain(clock);
    const done = await Promise.all(pending);

    expect(done.map((d) => d.res.status)).toEqual(Array(50).fill(200));
    const intervals = done.map((d) => ({ start: t0 + Number(d.res.headers.get('x-sim-queue-ms')), end: d.at }));
    expect(maxOverlap(intervals)).toBe(8);
    expect(maxSampled).toBe(8);
    expect(sim.stats()).toMatchObject({ served: 50, peakBusy: 8, peakQueue: 42, slotsBusy: 0, queueLength: 0 });
    // What the lab counts as "queued inside the GPU": the 42 that found every slot busy.
    expect(done.filter((d) => d.res.headers.get('x-sim-queued') === '1')).toHaveLength(42);
    expect(done.filter((d) => d.res.headers.get('x-sim-queued') === '0')).toHaveLength(8);
  });

  it('queues FIFO, then answers 429 with Retry-After when the queue is full', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 3, maxQueueWaitMs: 600_000 });
    const t0 = clock.now();
    const track = tracker(clock);
    const pending = [];
    for (const name of ['X', 'A', 'B', 'C']) {
      pending.push(track(post(sim, CHAT, chatBody(`prompt ${name}`))));
      await clock.advance(0); // each arrives before the next is sent
    }
    expect(sim.stats()).toMatchObject({ slotsBusy: 1, queueLength: 3 });

    const refused = await post(sim, CHAT, chatBody('prompt D'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toEqual({
      error: { message: expect.any(String), type: 'rate_limit_error', param: null, code: 'queue_full' },
    });

    await drain(clock);
    const done = await Promise.all(pending);
    expect(done.map((d) => d.res.status)).toEqual([200, 200, 200, 200]);
    expect(done.map((d) => d.order)).toEqual([0, 1, 2, 3]);
    // Each waiter got the slot exactly when the one ahead of it finished.
    for (let i = 1; i < done.length; i++) {
      expect(t0 + Number(done[i]!.res.headers.get('x-sim-queue-ms'))).toBe(done[i - 1]!.at);
    }
    expect(sim.stats()).toMatchObject({ served: 4, rejected429: 1, peakQueue: 3 });
  });

  it('answers 503 with Retry-After to a request that waited maxQueueWaitMs', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4, maxQueueWaitMs: 100, baseTokenMs: 20 });
    const t0 = clock.now();
    const track = tracker(clock);
    const first = track(post(sim, CHAT, chatBody('a long answer')));
    await clock.advance(0);
    const second = track(post(sim, CHAT, chatBody('waits too long')));
    await clock.advance(99);
    expect(sim.stats().queueLength).toBe(1);
    await clock.advance(1);

    const late = await second;
    expect(late.res.status).toBe(503);
    expect(late.at - t0).toBe(100);
    expect(Number(late.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await late.res.json()).error).toMatchObject({ type: 'server_error', code: 'queue_timeout' });
    expect(sim.stats()).toMatchObject({ rejected503: 1, queueLength: 0, slotsBusy: 1 });

    await drain(clock);
    expect((await first).res.status).toBe(200);
  });

  it('refuses queued and new requests with 503 after close()', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4 });
    const running = post(sim, CHAT, chatBody('running'));
    await clock.advance(0);
    const queued = post(sim, CHAT, chatBody('queued'));
    await clock.advance(0);
    sim.close();
    await clock.advance(0);
    expect((await queued).status).toBe(503);
    const r = await running;
    expect(r.status).toBe(503);
    expect((await r.json()).error.code).toBe('shutting_down');
    expect((await post(sim, CHAT, chatBody('late'))).status).toBe(503);
    expect(sim.stats()).toMatchObject({ slotsBusy: 0, queueLength: 0 });
  });
});
