import { describe, it, expect } from 'vitest';
import { chatBody, lab, post, tracker } from './harness.js';

const CHAT = '/v1/chat/completions';

describe('gpu-sim client abort', () => {
  it('releases the slot of an aborted non-streaming request and hands it to the queue', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4, baseTokenMs: 20 });
    const track = tracker(clock);
    const client = new AbortController();
    const gone = post(sim, CHAT, chatBody('will be abandoned'), client.signal);
    await clock.advance(0);
    const next = track(post(sim, CHAT, chatBody('waiting behind it')));
    await clock.advance(50);
    expect(sim.stats()).toMatchObject({ slotsBusy: 1, queueLength: 1 });

    client.abort();
    await clock.advance(0);
    expect(sim.stats()).toMatchObject({ slotsBusy: 1, queueLength: 0, aborted: 1, served: 0 });
    expect((await gone).status).toBe(499);

    await clock.advance(600_000);
    const n = await next;
    expect(n.res.status).toBe(200);
    expect(Number(n.res.headers.get('x-sim-queue-ms'))).toBe(50);
    expect(sim.stats()).toMatchObject({ slotsBusy: 0, served: 1, aborted: 1 });
  });

  it('removes an aborted request from the queue without touching the running one', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4 });
    const running = post(sim, CHAT, chatBody('running'));
    await clock.advance(0);
    const client = new AbortController();
    const queued = post(sim, CHAT, chatBody('queued'), client.signal);
    await clock.advance(10);
    expect(sim.stats().queueLength).toBe(1);
    client.abort();
    await clock.advance(0);
    expect(sim.stats()).toMatchObject({ queueLength: 0, slotsBusy: 1, aborted: 1 });
    expect((await queued).status).toBe(499);
    await clock.advance(600_000);
    expect((await running).status).toBe(200);
  });

  it('releases the slot when a streaming client cancels the body', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4, baseTokenMs: 20 });
    const res = await post(sim, CHAT, chatBody('streamed then dropped', { stream: true }));
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const reading = reader.read();
    await clock.advance(100);
    expect((await reading).done).toBe(false);
    expect(sim.stats().slotsBusy).toBe(1);

    await reader.cancel();
    await clock.advance(0);
    expect(sim.stats()).toMatchObject({ slotsBusy: 0, aborted: 1, served: 0 });
    expect(clock.pending).toBe(0); // no generation timer left running for nobody
  });

  it('releases the slot when the request signal of a stream aborts (how node-server reports a disconnect)', async () => {
    const { clock, sim } = lab({ slots: 1, queueLimit: 4, baseTokenMs: 20 });
    const client = new AbortController();
    const res = await post(sim, CHAT, chatBody('streamed then disconnected', { stream: true }), client.signal);
    expect(res.status).toBe(200);
    await clock.advance(100);
    expect(sim.stats().slotsBusy).toBe(1);
    client.abort();
    await clock.advance(0);
    expect(sim.stats()).toMatchObject({ slotsBusy: 0, aborted: 1 });
    await res.body?.cancel().catch(() => undefined);
  });
});
