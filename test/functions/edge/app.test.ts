import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({ edge: { bodyLimitBytes: 4096 } });
});
afterAll(() => sluice.close());

const req = (path: string, init?: RequestInit) => sluice.app.request(path, init);

async function expectError(res: Response, status: number, code: string | null, param?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(res.headers.get('x-sluice-request-id')).toMatch(/^req_/);
  const body = (await res.json()) as { error: Record<string, unknown> };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  if (param !== undefined) expect(body.error.param).toBe(param);
  return body.error;
}

describe('edge: bad input gets an OpenAI-style error and the right status', () => {
  it('401 without a key, and with an unknown key', async () => {
    await expectError(await req('/v1/chat/completions', chat(undefined)), 401, 'missing_api_key');
    await expectError(await req('/v1/chat/completions', chat('sk-nope')), 401, 'invalid_api_key');
    await expectError(await req('/v1/models'), 401, 'missing_api_key');
  });

  it('415 for a body that is not JSON', async () => {
    const res = await req('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'text/plain' },
      body: 'hi',
    });
    await expectError(res, 415, 'unsupported_media_type');
  });

  it('413 for a body over the limit', async () => {
    const big = { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(5000) }] };
    await expectError(await req('/v1/chat/completions', chat(KEYS.a1, big)), 413, 'request_too_large');
  });

  it('400 for malformed JSON and for missing or wrong fields, naming the field', async () => {
    await expectError(await req('/v1/chat/completions', chat(KEYS.a1, '{"model": "m", ')), 400, 'invalid_json');
    await expectError(
      await req('/v1/chat/completions', chat(KEYS.a1, { model: 'm' })),
      400,
      'invalid_value',
      'messages',
    );
    await expectError(
      await req('/v1/chat/completions', chat(KEYS.a1, { messages: [{ role: 'user', content: 'x' }] })),
      400,
      'invalid_value',
      'model',
    );
    await expectError(
      await req('/v1/chat/completions', chat(KEYS.a1, { model: 'm', messages: [], max_tokens: 5 })),
      400,
      'invalid_value',
      'messages',
    );
    await expectError(
      await req('/v1/completions', chat(KEYS.a1, { model: 'm', prompt: 'x', max_tokens: -1 })),
      400,
      'invalid_value',
      'max_tokens',
    );
  });

  it('404 for an unknown model and an unknown route', async () => {
    await expectError(
      await req('/v1/chat/completions', chat(KEYS.a1, { model: 'gpt-9', messages: [{ role: 'user', content: 'x' }] })),
      404,
      'model_not_found',
      'model',
    );
    await expectError(await req('/v2/nothing'), 404, 'unknown_route');
  });

  it('400 for a request larger than a whole limit window, not a misleading 429', async () => {
    const res = await req(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content: 'x' }], max_tokens: 10_000_000 }),
    );
    await expectError(res, 400, 'request_too_large_for_limit');
  });
});

describe('edge: answers', () => {
  it('sync chat completion with rate-limit headers', async () => {
    const res = await req('/v1/chat/completions', chat(KEYS.a1));
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      object: string;
      choices: Array<{ message: { content: string } }>;
      usage: { total_tokens: number };
    };
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0]!.message.content.length).toBeGreaterThan(0);
    expect(res.headers.get('x-sluice-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('600');
    expect(Number(res.headers.get('x-ratelimit-remaining-requests'))).toBeLessThan(600);
    expect(res.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+m)?\d+(\.\d+)?s$|^\d+ms$/);
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('200000');
    expect(res.headers.get('ratelimit-policy')).toContain('"account-model:requests";q=600;qu="requests";w=60');
    expect(res.headers.get('ratelimit-policy')).toContain('"account-model:tokens";q=200000;sluice-qu="tokens";w=60');
    expect(res.headers.get('ratelimit')).toMatch(/"tenant:requests";r=\d+;t=\d+/);
  });

  it('legacy completions and embeddings pass through', async () => {
    const c = await req('/v1/completions', chat(KEYS.a1, { model: 'm', prompt: 'Once upon', max_tokens: 4 }));
    expect(c.status).toBe(200);
    expect(((await c.json()) as { object: string }).object).toBe('text_completion');
    const e = await req('/v1/embeddings', chat(KEYS.a1, { model: 'm', input: 'vector me' }));
    expect(e.status).toBe(200);
    expect(((await e.json()) as { data: Array<{ embedding: number[] }> }).data[0]!.embedding.length).toBeGreaterThan(0);
  });

  it('streams SSE chunks and ends with [DONE]', async () => {
    const res = await req(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', stream: true, messages: [{ role: 'user', content: 'stream me' }] }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    const data = text
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => l.slice(6));
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data
      .slice(0, -1)
      .map((d) => JSON.parse(d) as { object: string; choices: Array<{ delta?: { content?: string } }> });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(0);
  });

  it('lists models', async () => {
    const res = await req('/v1/models', { headers: { authorization: `Bearer ${KEYS.a1}` } });
    expect(await res.json()).toEqual({
      object: 'list',
      data: [{ id: 'm', object: 'model', created: 0, owned_by: 'sluice' }],
    });
  });

  it('healthz', async () => {
    const res = await req('/healthz');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-request-id')).toBeTruthy();
  });
});

describe('edge: async requests', () => {
  it('202 with a status URL; the result is readable by its own tenant only', async () => {
    const res = await req('/v1/chat/completions', chat(KEYS.a1, undefined, { prefer: 'respond-async' }));
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { id: string; status: string; status_url: string };
    expect(accepted.status).toBe('queued');
    expect(accepted.id).toBe(res.headers.get('x-sluice-request-id'));
    // No public base URL configured: a relative path, never built from the Host header.
    const path = accepted.status_url;
    expect(path).toBe(`/v1/requests/${accepted.id}`);
    expect(res.headers.get('location')).toBe(path);

    let status = '';
    let body: { status: string; result?: { object: string } } = { status: '' };
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      const r = await req(path, { headers: { authorization: `Bearer ${KEYS.a2}` } }); // same tenant, other account
      expect(r.status).toBe(200);
      body = (await r.json()) as typeof body;
      status = body.status;
      if (status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(body.result?.object).toBe('chat.completion');

    const other = await req(path, { headers: { authorization: `Bearer ${KEYS.b1}` } });
    await expectError(other, 404, 'request_not_found');
    await expectError(
      await req('/v1/requests/req_unknown', { headers: { authorization: `Bearer ${KEYS.a1}` } }),
      404,
      'request_not_found',
    );
  });
});
