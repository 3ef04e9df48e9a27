/**
 * The contract: every response Sluice gives, for every route and mode, conforms to the
 * component schemas of the official OpenAI OpenAPI document (the pinned extract in
 * test/fixtures/openai-openapi/), and streams carry usage only when the client asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../functions/local/sluice.js';
import { defaultLimits } from '../../lib/policy/defaults.js';
import { sseEvents, type SseEvent } from '../../lib/upstream/sse.js';
import { chat, clearOfMinuteEdge, KEYS, startTestSluice } from '../support/local-sluice.js';
import { fixture, violations } from '../support/openai-spec.js';

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({ edge: { bodyLimitBytes: 64 * 1024 } });
});
afterAll(() => sluice.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  sluice.app.request(path, chat(KEYS.a1, body, headers));
const get = (path: string, key: string = KEYS.a1) =>
  sluice.app.request(path, { headers: { authorization: `Bearer ${key}` } });

function conforms(schema: string, value: unknown) {
  expect(violations(schema, value), `${schema}: ${JSON.stringify(value).slice(0, 300)}`).toEqual([]);
}

async function events(res: Response): Promise<SseEvent[]> {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const out: SseEvent[] = [];
  // Node's web streams are async-iterable; the DOM typings do not say so.
  for await (const e of sseEvents(res.body as unknown as AsyncIterable<Uint8Array>)) out.push(e);
  return out;
}

/** Chunks of a chat or completions stream, checking it ends with [DONE] and nothing after. */
async function chunks(res: Response): Promise<Record<string, unknown>[]> {
  const all = await events(res);
  expect(all.at(-1)?.data).toBe('[DONE]');
  return all.slice(0, -1).map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

async function errorConforms(res: Response, status: number) {
  expect(res.status).toBe(status);
  conforms('ErrorResponse', await res.json());
}

async function asyncResult(res: Response): Promise<unknown> {
  expect(res.status).toBe(202);
  const { status_url } = (await res.json()) as { status_url: string };
  for (let i = 0; i < 200; i++) {
    const body = (await (await get(new URL(status_url, 'http://sluice.invalid').pathname)).json()) as {
      status: string;
      result?: unknown;
    };
    if (body.status === 'completed') return body.result;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('async request did not complete');
}

const messages = [{ role: 'user', content: 'tell me about sluices' }];

describe('contract: the pinned document and its loader', () => {
  it('names its source and pins a commit', () => {
    expect(fixture.source).toMatchObject({
      repository: 'https://github.com/openai/openai-openapi',
      path: 'openapi.yaml',
    });
    expect(fixture.source.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('honours nullable: null passes where the document allows it, and only there', () => {
    const chunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta: {}, finish_reason: null, logprobs: null }],
    };
    conforms('CreateChatCompletionStreamResponse', { ...chunk, usage: null });
    expect(violations('CreateChatCompletionStreamResponse', { ...chunk, created: null })).not.toEqual([]);
    expect(
      violations('CreateChatCompletionStreamResponse', {
        ...chunk,
        choices: [{ index: 0, delta: {}, finish_reason: 'bogus' }],
      }),
    ).not.toEqual([]);
    expect(violations('ErrorResponse', { error: { message: 'x', type: 't', param: null } })).not.toEqual([]);
  });
});

describe('contract: sync answers', () => {
  it('chat completions', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'm',
      messages,
      max_tokens: null,
      stream: null,
      n: 1,
      temperature: 0.2,
    });
    expect(res.status).toBe(200);
    conforms('CreateChatCompletionResponse', await res.json());
  });

  it('completions, with text, token-id and batched token-id prompts', async () => {
    for (const prompt of ['Once upon', [1, 2, 3], [[1, 2], [3]], ['a', 'b']]) {
      const res = await post('/v1/completions', { model: 'm', prompt, max_tokens: 4 });
      expect(res.status).toBe(200);
      conforms('CreateCompletionResponse', await res.json());
    }
  });

  it('embeddings, float and base64, from text and token ids', async () => {
    for (const body of [
      { input: 'vector me' },
      { input: ['a', 'b'], encoding_format: 'float' },
      { input: [1, 2, 3] },
      { input: [[1, 2], [3]] },
    ]) {
      const res = await post('/v1/embeddings', { model: 'm', ...body });
      expect(res.status).toBe(200);
      conforms('CreateEmbeddingResponse', await res.json());
    }
    // The document types `embedding` as numbers only, though the API (and the Node SDK's
    // default request) uses base64: check the decoded floats, as the SDK reads them.
    const res = await post('/v1/embeddings', { model: 'm', input: ['a', 'b'], encoding_format: 'base64' });
    const body = (await res.json()) as { data: { embedding: string }[] };
    const decoded = body.data.map((d) => {
      expect(typeof d.embedding).toBe('string');
      const bytes = Buffer.from(d.embedding, 'base64');
      return { ...d, embedding: Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4)) };
    });
    conforms('CreateEmbeddingResponse', { ...body, data: decoded });
  });

  it('responses', async () => {
    for (const body of [
      { input: 'hello' },
      { input: [{ role: 'user', content: 'hello' }], instructions: 'be brief', max_output_tokens: 16 },
    ]) {
      const res = await post('/v1/responses', { model: 'm', ...body });
      expect(res.status).toBe(200);
      conforms('Response', await res.json());
    }
  });

  it('models: list and retrieve', async () => {
    const list = await get('/v1/models');
    expect(list.status).toBe(200);
    conforms('ListModelsResponse', await list.json());
    const one = await get('/v1/models/m');
    expect(one.status).toBe(200);
    conforms('Model', await one.json());
    await errorConforms(await get('/v1/models/nope'), 404);
    await errorConforms(await get('/v1/models/__proto__'), 404);
  });
});

describe('contract: streams', () => {
  it('chat without include_usage: every chunk has a choice and no usage field', async () => {
    for (const stream_options of [undefined, null, { include_usage: false }]) {
      const all = await chunks(
        await post('/v1/chat/completions', { model: 'm', messages, stream: true, stream_options }),
      );
      expect(all.length).toBeGreaterThan(2);
      for (const c of all) {
        conforms('CreateChatCompletionStreamResponse', c);
        expect(c).not.toHaveProperty('usage');
        expect((c.choices as unknown[])[0]).toBeDefined();
      }
    }
  });

  it('chat with include_usage: usage null on every chunk, then one usage chunk with no choices', async () => {
    const all = await chunks(
      await post('/v1/chat/completions', {
        model: 'm',
        messages,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    for (const c of all) conforms('CreateChatCompletionStreamResponse', c);
    const last = all.at(-1)!;
    expect(last.choices).toEqual([]);
    expect((last.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    for (const c of all.slice(0, -1)) expect(c.usage).toBeNull();
  });

  it('completions, with and without include_usage', async () => {
    const plain = await chunks(await post('/v1/completions', { model: 'm', prompt: 'Once', stream: true }));
    for (const c of plain) {
      conforms('CreateCompletionResponse', {
        ...c,
        choices: (c.choices as object[]).map((x) => ({ ...x, finish_reason: 'stop' })),
      });
      expect(c).not.toHaveProperty('usage');
      expect((c.choices as unknown[])[0]).toBeDefined();
    }
    const counted = await chunks(
      await post('/v1/completions', {
        model: 'm',
        prompt: 'Once',
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(counted.at(-1)!.choices).toEqual([]);
    conforms('CompletionUsage', counted.at(-1)!.usage);
  });

  it('responses: every event conforms, is named by its type, and the last one completes with usage', async () => {
    const all = await events(await post('/v1/responses', { model: 'm', input: 'stream me', stream: true }));
    expect(all.map((e) => e.data)).not.toContain('[DONE]');
    const parsed = all.map((e) => ({
      event: e.event,
      data: JSON.parse(e.data) as { type: string; response?: { usage?: unknown } },
    }));
    for (const e of parsed) {
      conforms('ResponseStreamEvent', e.data);
      expect(e.event).toBe(e.data.type);
    }
    expect(parsed[0]!.data.type).toBe('response.created');
    expect(parsed.at(-1)!.data.type).toMatch(/^response\.(completed|incomplete)$/);
    conforms('ResponseUsage', parsed.at(-1)!.data.response!.usage);
    expect(parsed.map((e) => e.data.type)).toContain('response.output_text.delta');
  });
});

describe('contract: async mode', () => {
  it('chat, completions, embeddings and responses results conform once done', async () => {
    const prefer = { prefer: 'respond-async' };
    conforms(
      'CreateChatCompletionResponse',
      await asyncResult(await post('/v1/chat/completions', { model: 'm', messages }, prefer)),
    );
    conforms(
      'CreateCompletionResponse',
      await asyncResult(await post('/v1/completions', { model: 'm', prompt: 'x' }, prefer)),
    );
    conforms(
      'CreateEmbeddingResponse',
      await asyncResult(await post('/v1/embeddings', { model: 'm', input: 'x' }, prefer)),
    );
    conforms('Response', await asyncResult(await post('/v1/responses', { model: 'm', input: 'x' }, prefer)));
  });
});

describe('contract: errors', () => {
  it('400, 401, 404, 413, 415 are ErrorResponse objects', async () => {
    await errorConforms(await post('/v1/chat/completions', '{"model": '), 400);
    await errorConforms(await post('/v1/chat/completions', { model: 'm', messages, n: 0 }), 400);
    await errorConforms(await sluice.app.request('/v1/chat/completions', chat(undefined)), 401);
    await errorConforms(await sluice.app.request('/v1/chat/completions', chat('sk-nope')), 401);
    await errorConforms(await post('/v1/chat/completions', { model: 'nope', messages }), 404);
    await errorConforms(await post('/v1/chat/completions', { model: 'constructor', messages }), 404);
    await errorConforms(await get('/v2/nothing'), 404);
    await errorConforms(
      await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(70_000) }] }),
      413,
    );
    const plain = await sluice.app.request('/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'text/plain' },
      body: 'x',
    });
    await errorConforms(plain, 415);
  });

  it('an upstream 400 comes back as the upstream said it, in sync and stream modes', async () => {
    // The document sets no maximum for dimensions; the simulated GPU refuses past 4096 as a real engine would.
    const res = await post('/v1/embeddings', { model: 'm', input: 'x', dimensions: 5000 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string } };
    conforms('ErrorResponse', body);
    expect(body.error.param).toBe('dimensions');
    sluice.gpu.faults.failNext(422);
    await errorConforms(await post('/v1/chat/completions', { model: 'm', messages, stream: true }), 422);
  });

  it('429 is an ErrorResponse too', async () => {
    const tight = await startTestSluice({
      overrides: { defaults: { ...defaultLimits, accountModel: { ...defaultLimits.accountModel, rpm: 1 } } },
    });
    try {
      await clearOfMinuteEdge();
      expect((await tight.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
      const res = await tight.app.request('/v1/chat/completions', chat(KEYS.a1));
      expect(res.headers.get('x-sluice-reason')).toBe('account-model:requests');
      expect(res.headers.get('ratelimit-policy')).toContain('"account-model:requests";q=1;qu="requests";w=60');
      await errorConforms(res, 429);
    } finally {
      await tight.close();
    }
  });
});
