import { describe, it, expect } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { chatBody, drain, lab, post, tracker, type Lab } from './harness.js';

const CHAT = '/v1/chat/completions';

async function complete(l: Lab, path: string, body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
  const p = post(l.sim, path, body);
  await drain(l.clock);
  const res = await p;
  return { status: res.status, json: res.status === 499 ? null : await res.json(), headers: res.headers };
}

/** OpenAI's error body: exactly these four keys, param and code possibly null. */
function expectErrorShape(json: unknown): void {
  const error = (json as { error: Record<string, unknown> }).error;
  expect(Object.keys(json as object)).toEqual(['error']);
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(typeof error.message).toBe('string');
  expect(typeof error.type).toBe('string');
  for (const k of ['param', 'code']) expect(error[k] === null || typeof error[k] === 'string').toBe(true);
}

describe('gpu-sim answers', () => {
  it('gives the same answer to the same prompt, on any instance, and a different one to another prompt', async () => {
    const body = chatBody('What is a leaky bucket?');
    const a = await complete(lab(), CHAT, body);
    const b = await complete(lab(), CHAT, body);
    const other = await complete(lab(), CHAT, chatBody('What is a token bucket?'));
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ object: 'chat.completion', model: 'sim-llm' });
    expect(a.json.choices).toEqual(b.json.choices);
    expect(a.json.usage).toEqual(b.json.usage);
    expect(other.json.choices[0].message.content).not.toBe(a.json.choices[0].message.content);
  });

  it('counts prompt tokens as ceil(chars/4) over all message contents, including content parts', async () => {
    const body = {
      model: 'sim-llm',
      messages: [
        { role: 'system', content: 'abcde' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'fgh' },
            { type: 'text', text: 'ij' },
          ],
        },
      ],
    };
    const { json } = await complete(lab(), CHAT, body);
    expect(json.usage.prompt_tokens).toBe(3); // 10 chars
    expect(json.usage.total_tokens).toBe(json.usage.prompt_tokens + json.usage.completion_tokens);
    expect(json.usage.completion_tokens).toBeGreaterThanOrEqual(16);
    expect(json.usage.completion_tokens).toBeLessThanOrEqual(128);
    expect(json.choices[0].message.content.split(' ')).toHaveLength(json.usage.completion_tokens);
  });

  it('caps output at max_tokens / max_completion_tokens / defaultMaxTokens with finish_reason length', async () => {
    const capped = await complete(lab(), CHAT, chatBody('cap me', { max_tokens: 3 }));
    expect(capped.json.usage.completion_tokens).toBe(3);
    expect(capped.json.choices[0].finish_reason).toBe('length');
    const newer = await complete(lab(), CHAT, chatBody('cap me', { max_completion_tokens: 4, max_tokens: 9 }));
    expect(newer.json.usage.completion_tokens).toBe(4);
    const byDefault = await complete(lab({ defaultMaxTokens: 7 }), CHAT, chatBody('cap me'));
    expect(byDefault.json.usage.completion_tokens).toBe(7);
    const uncapped = await complete(lab(), CHAT, chatBody('cap me', { max_tokens: 1000 }));
    expect(uncapped.json.choices[0].finish_reason).toBe('stop');
    // A cap cuts the same answer short rather than choosing another one.
    expect(
      uncapped.json.choices[0].message.content.startsWith(capped.json.choices[0].message.content.slice(0, -1)),
    ).toBe(true);
  });

  it('answers legacy completions with a text_completion', async () => {
    const { status, json } = await complete(lab(), '/v1/completions', {
      model: 'sim-llm',
      prompt: 'abcdefgh',
      max_tokens: 5,
    });
    expect(status).toBe(200);
    expect(json).toMatchObject({
      object: 'text_completion',
      usage: { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 },
    });
    expect(json.choices[0]).toMatchObject({ index: 0, finish_reason: 'length', text: expect.any(String) });
  });

  it('lists its models and reports health and stats', async () => {
    const l = lab({ models: ['m-a', 'm-b'] });
    const models = await (await l.sim.app.request('/v1/models')).json();
    expect(models.object).toBe('list');
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(['m-a', 'm-b']);
    expect(models.data[0]).toMatchObject({ object: 'model', owned_by: 'gpu-sim' });
    const one = await l.sim.app.request('/v1/models/m-b');
    expect(await one.json()).toMatchObject({ id: 'm-b', object: 'model' });
    const missing = await l.sim.app.request('/v1/models/m-c');
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe('model_not_found');
    const health = await l.sim.app.request('/healthz');
    expect(health.status).toBe(200);
    expect((await health.json()).status).toBe('ok');
    const stats = await (await l.sim.app.request('/stats')).json();
    expect(stats).toEqual(l.sim.stats());
    expect(stats).toMatchObject({
      slots: 8,
      queueLimit: 16,
      slotsBusy: 0,
      queueLength: 0,
      served: 0,
      rejected429: 0,
      rejected503: 0,
      peakBusy: 0,
    });
    l.sim.close();
    expect((await l.sim.app.request('/healthz')).status).toBe(503);
  });
});

describe('gpu-sim errors', () => {
  it('answers 404 model_not_found in the OpenAI error shape for an unknown model', async () => {
    const l = lab();
    for (const path of [CHAT, '/v1/completions', '/v1/embeddings']) {
      const body = { model: 'gpt-nope', messages: [{ role: 'user', content: 'x' }], prompt: 'x', input: 'x' };
      const { status, json } = await complete(l, path, body);
      expect(status).toBe(404);
      expect(json).toEqual({
        error: {
          message: 'The model `gpt-nope` does not exist.',
          type: 'invalid_request_error',
          param: 'model',
          code: 'model_not_found',
        },
      });
    }
    expect(l.sim.stats().peakBusy).toBe(0);
  });

  it('answers 400 for a body that is not JSON or not a valid request', async () => {
    const l = lab();
    const bad = await complete(l, CHAT, '{"model": "sim-llm", ');
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: 'invalid_json' },
    });

    const noMessages = await complete(l, CHAT, { model: 'sim-llm' });
    expect(noMessages.status).toBe(400);
    expect(noMessages.json).toMatchObject({ error: { type: 'invalid_request_error', param: 'messages' } });

    const zeroTokens = await complete(l, CHAT, chatBody('x', { max_tokens: 0 }));
    expect(zeroTokens.status).toBe(400);
    expect(zeroTokens.json.error.param).toBe('max_tokens');

    const badInput = await complete(l, '/v1/embeddings', { model: 'sim-llm', input: [{}] });
    expect(badInput.status).toBe(400);
    expectErrorShape(badInput.json);
  });

  it('answers unknown routes with a 404 in the OpenAI error shape', async () => {
    const res = await lab().sim.app.request('/v1/nothing-here');
    expect(res.status).toBe(404);
    expectErrorShape(await res.json());
  });

  it('rejects nonsensical options', () => {
    const clock = new VirtualClock();
    expect(() => createGpuSim({ clock, slots: 0 })).toThrow();
    expect(() => createGpuSim({ clock, models: [] })).toThrow();
    expect(() => createGpuSim({ clock, minOutputTokens: 50, maxOutputTokens: 10 })).toThrow();
    expect(() => createGpuSim({ clock: {} as VirtualClock })).toThrow();
  });
});

describe('gpu-sim embeddings', () => {
  it('returns deterministic unit vectors, one per input, after a short time on a slot', async () => {
    const l = lab({ embeddingDims: 8, embeddingBaseMs: 5, prefillMsPerKToken: 40 });
    const t0 = l.clock.now();
    const p = tracker(l.clock)(
      post(l.sim, '/v1/embeddings', { model: 'sim-llm', input: ['abcd'.repeat(250), 'other'] }),
    );
    await l.clock.advance(1);
    expect(l.sim.stats().slotsBusy).toBe(1);
    await drain(l.clock);
    const { res, at } = await p;
    const json = await res.json();
    expect(json.object).toBe('list');
    expect(json.usage).toEqual({ prompt_tokens: 252, total_tokens: 252 });
    expect(json.data).toHaveLength(2);
    for (const d of json.data) {
      expect(d.embedding).toHaveLength(8);
      expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 4);
    }
    expect(json.data[0].embedding).not.toEqual(json.data[1].embedding);
    expect(at - t0).toBeCloseTo((5 + 40 * 0.252) * (1 + 1 / 8), 3);

    const again = await complete(lab(), '/v1/embeddings', { model: 'sim-llm', input: 'other' });
    expect(again.json.data[0].embedding).toEqual(json.data[1].embedding);
  });

  it('honours dimensions and base64 encoding', async () => {
    const plain = await complete(lab(), '/v1/embeddings', { model: 'sim-llm', input: 'hello', dimensions: 16 });
    expect(plain.json.data[0].embedding).toHaveLength(16);
    const b64 = await complete(lab(), '/v1/embeddings', {
      model: 'sim-llm',
      input: 'hello',
      dimensions: 16,
      encoding_format: 'base64',
    });
    const buf = Buffer.from(b64.json.data[0].embedding, 'base64');
    const floats = Array.from({ length: buf.length / 4 }, (_, i) => buf.readFloatLE(i * 4));
    floats.forEach((f, i) => expect(f).toBeCloseTo(plain.json.data[0].embedding[i], 5));
  });
});

describe('gpu-sim fault injection', () => {
  it('fails the next N requests with the given status and Retry-After, then recovers', async () => {
    const l = lab();
    l.sim.faults.failNext(503, 2, 7);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await complete(l, CHAT, chatBody(`try ${i}`));
      statuses.push(r.status);
      if (r.status === 503) {
        expect(r.headers.get('retry-after')).toBe('7');
        expect(r.json.error).toMatchObject({ type: 'server_error', code: 'injected_fault' });
      }
    }
    expect(statuses).toEqual([503, 503, 200]);
    l.sim.faults.failNext(500);
    const five = await complete(l, CHAT, chatBody('boom'));
    expect(five.status).toBe(500);
    expect(five.headers.get('retry-after')).toBeNull();
    expect(l.sim.stats()).toMatchObject({ faults: 3, served: 1, peakBusy: 1 });
  });

  it('fails an exact, evenly spread fraction of requests at a set rate', async () => {
    const l = lab();
    l.sim.faults.setFailureRate(0.25, 500);
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await complete(l, CHAT, chatBody(`r${i}`, { max_tokens: 1 }))).status);
    expect(statuses).toEqual([200, 200, 200, 500, 200, 200, 200, 500]);

    const fromOptions = lab({ failureRate: 0.5, failureStatus: 429 });
    const r = [];
    for (let i = 0; i < 4; i++)
      r.push((await complete(fromOptions, CHAT, chatBody(`o${i}`, { max_tokens: 1 }))).status);
    expect(r).toEqual([200, 429, 200, 429]);
  });
});
