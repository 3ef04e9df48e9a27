import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createInProcessUpstream } from '../../../lib/upstream/in-process.js';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';

const chat = { model: 'm', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 };

describe('in-process upstream: calls a fetch function, no socket', () => {
  it('sync call to the simulated GPU under a virtual clock, in virtual time only', async () => {
    const clock = new VirtualClock(1_000);
    const gpu = createGpuSim({
      clock,
      models: ['m'],
      slots: 2,
      baseTokenMs: 10,
      minOutputTokens: 8,
      maxOutputTokens: 8,
    });
    const seen: number[] = [];
    const upstream = createInProcessUpstream({
      fetch: gpu.app.fetch,
      clock,
      onResponse: (_, r) => seen.push(r.status),
    });
    const started = Date.now();
    const reply = upstream.call({
      baseUrl: 'http://gpu.sim/v1',
      operation: 'chat.completions',
      body: chat,
      timeoutMs: 60_000,
    });
    await clock.advance(10_000);
    const r = await reply;
    expect(r.status).toBe(200);
    expect((r.json as { object: string; usage: { completion_tokens: number } }).object).toBe('chat.completion');
    expect((r.json as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
    expect(seen).toEqual([200]);
    expect(gpu.stats().served).toBe(1);
    // 8 tokens at >= 10 ms each took virtual time, not wall time.
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(clock.pending).toBe(0);
  });

  it('streams SSE payloads in order, [DONE] excluded, usage included', async () => {
    const clock = new VirtualClock(0);
    const gpu = createGpuSim({
      clock,
      models: ['m'],
      slots: 1,
      baseTokenMs: 5,
      minOutputTokens: 4,
      maxOutputTokens: 4,
    });
    const upstream = createInProcessUpstream({ fetch: gpu.app.fetch, clock });
    const chunks: string[] = [];
    const reply = upstream.stream(
      { baseUrl: 'http://gpu.sim/v1', operation: 'chat.completions', body: chat, timeoutMs: 60_000 },
      async (d) => {
        chunks.push(d);
      },
    );
    await clock.advance(5_000);
    expect((await reply).status).toBe(200);
    expect(chunks).not.toContain('[DONE]');
    const parsed = chunks.map((c) => JSON.parse(c) as { object: string; usage?: { total_tokens: number } | null });
    expect(parsed.every((p) => p.object === 'chat.completion.chunk')).toBe(true);
    expect(parsed.at(-1)!.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('passes error statuses, bodies and Retry-After through', async () => {
    const clock = new VirtualClock(0);
    const gpu = createGpuSim({ clock, models: ['m'], slots: 1, queueLimit: 0 });
    const upstream = createInProcessUpstream({ fetch: gpu.app.fetch, clock });
    const call = {
      baseUrl: 'http://gpu.sim/v1',
      operation: 'chat.completions' as const,
      body: chat,
      timeoutMs: 60_000,
    };
    const first = upstream.call(call);
    const second = upstream.call(call);
    await clock.advance(60_000);
    expect((await first).status).toBe(200);
    const refused = await second;
    expect(refused.status).toBe(429);
    expect(refused.retryAfterSec).toBeGreaterThanOrEqual(1);
    expect((refused.json as { error: { code: string } }).error.code).toBe('queue_full');
    const unknown = upstream.call({ ...call, body: { ...chat, model: 'nope' } });
    await clock.advance(10);
    expect((await unknown).status).toBe(404);
  });

  it('times out on the injected clock and aborts the app side', async () => {
    const clock = new VirtualClock(0);
    let aborted = false;
    const app = new Hono().post('/v1/chat/completions', async (c) => {
      c.req.raw.signal.addEventListener('abort', () => (aborted = true));
      await sleep(clock, 10_000);
      return c.json({ late: true });
    });
    const upstream = createInProcessUpstream({ fetch: app.fetch, clock });
    const reply = upstream.call({ baseUrl: 'http://x/v1', operation: 'chat.completions', body: chat, timeoutMs: 500 });
    const outcome = reply.then(
      () => 'resolved',
      (e: Error) => e.name,
    );
    await clock.advance(499);
    await clock.advance(1);
    expect(await outcome).toBe('TimeoutError');
    expect(aborted).toBe(true);
  });

  it('cuts a stream at the deadline', async () => {
    const clock = new VirtualClock(0);
    const app = new Hono().post('/v1/chat/completions', (c) =>
      streamSSE(c, async (sse) => {
        for (let i = 0; i < 100; i++) {
          await sse.writeSSE({ data: JSON.stringify({ i }) });
          await sleep(clock, 100);
        }
      }),
    );
    const upstream = createInProcessUpstream({ fetch: app.fetch, clock });
    const got: string[] = [];
    const reply = upstream
      .stream({ baseUrl: 'http://x/v1', operation: 'chat.completions', body: chat, timeoutMs: 350 }, async (d) => {
        got.push(d);
      })
      .then(
        () => 'resolved',
        (e: Error) => e.name,
      );
    await clock.advance(2_000);
    expect(await reply).toBe('TimeoutError');
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThanOrEqual(5);
  });

  it('routes by origin to one of several apps', async () => {
    const a = new Hono().post('/v1/embeddings', (c) => c.json({ from: 'a' }));
    const b = new Hono().post('/v1/embeddings', (c) => c.json({ from: 'b' }));
    const upstream = createInProcessUpstream({ fetch: { 'http://gpu-a': a.fetch, 'http://gpu-b:8000': b.fetch } });
    const call = (baseUrl: string) =>
      upstream.call({ baseUrl, operation: 'embeddings', body: { model: 'm', input: 'x' }, timeoutMs: 1000 });
    expect((await call('http://gpu-a/v1')).json).toEqual({ from: 'a' });
    expect((await call('http://gpu-b:8000/v1/')).json).toEqual({ from: 'b' });
    await expect(call('http://gpu-c/v1')).rejects.toThrow(/no in-process upstream/);
  });

  it('non-JSON error bodies become an OpenAI-style error', async () => {
    const app = new Hono().post('/v1/completions', (c) => c.text('bad gateway', 502));
    const upstream = createInProcessUpstream({ fetch: app.fetch });
    const r = await upstream.call({
      baseUrl: 'http://x/v1',
      operation: 'completions',
      body: { model: 'm', prompt: 'p' },
      timeoutMs: 1000,
    });
    expect(r.status).toBe(502);
    expect(r.json).toEqual({ error: { message: 'bad gateway', type: 'upstream_error' } });
  });
});
