/**
 * The edge's request schemas agree with the document's: each body below is run through
 * the document's request schema and through the edge. What the document allows is
 * served; what it forbids is a 400 naming the field, answered before admission (no
 * rate-limit headers: nothing was charged).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../functions/local/sluice.js';
import { chat, KEYS, startTestSluice } from '../support/local-sluice.js';
import { violations } from '../support/openai-spec.js';

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice();
});
afterAll(() => sluice.close());

const msgs = [{ role: 'user', content: 'hi' }];

type Case = readonly [path: string, schema: string, body: Record<string, unknown>, refusedField?: string];

const CASES: Case[] = [
  // Allowed by the document.
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, max_tokens: null, max_completion_tokens: null, stream: null },
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, n: 2, temperature: 2, top_p: 0, top_logprobs: 20, logprobs: true },
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    {
      model: 'm',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: null, tool_calls: [] },
        { role: 'tool', content: 'x', tool_call_id: 't1' },
      ],
    },
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, stop: ['a', 'b'], seed: 7, stream_options: null, user: 'u' },
  ],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: 'x', max_tokens: 0 }],
  [
    '/v1/completions',
    'CreateCompletionRequest',
    { model: 'm', prompt: [1, 2, 3], max_tokens: null, n: null, stream: null },
  ],
  [
    '/v1/completions',
    'CreateCompletionRequest',
    { model: 'm', prompt: [[1, 2], [3]], best_of: 2, n: 2, logprobs: 5, echo: true },
  ],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: null, temperature: null, suffix: null }],
  ['/v1/embeddings', 'CreateEmbeddingRequest', { model: 'm', input: [1, 2, 3] }],
  [
    '/v1/embeddings',
    'CreateEmbeddingRequest',
    { model: 'm', input: [[1, 2], [3]], encoding_format: 'float', dimensions: 8 },
  ],
  [
    '/v1/responses',
    'CreateResponse',
    { model: 'm', input: 'hi', max_output_tokens: 16, temperature: null, instructions: null, stream: null },
  ],
  [
    '/v1/responses',
    'CreateResponse',
    { model: 'm', input: [{ role: 'user', content: 'hi' }], top_logprobs: 3, background: false },
  ],
  // Forbidden by the document.
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: msgs, n: 0 }, 'n'],
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: msgs, n: 129 }, 'n'],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, temperature: 5 },
    'temperature',
  ],
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: msgs, top_p: 1.5 }, 'top_p'],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, top_logprobs: 50 },
    'top_logprobs',
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, presence_penalty: 3 },
    'presence_penalty',
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: msgs, stop: ['a', 'b', 'c', 'd', 'e'] },
    'stop',
  ],
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: msgs, logprobs: 3 }, 'logprobs'],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: [{ role: 'wizard', content: 'x' }] },
    'messages.0.role',
  ],
  [
    '/v1/chat/completions',
    'CreateChatCompletionRequest',
    { model: 'm', messages: [{ role: 'tool', content: 'x' }] },
    'messages.0.tool_call_id',
  ],
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: [] }, 'messages'],
  ['/v1/chat/completions', 'CreateChatCompletionRequest', { model: 'm', messages: msgs, stream: 'yes' }, 'stream'],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: 'x', max_tokens: -1 }, 'max_tokens'],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: 'x', best_of: 21 }, 'best_of'],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: 'x', logprobs: 6 }, 'logprobs'],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: [[]] }, 'prompt.0'],
  ['/v1/completions', 'CreateCompletionRequest', { model: 'm', prompt: [1.5] }, 'prompt'],
  ['/v1/embeddings', 'CreateEmbeddingRequest', { model: 'm', input: 'x', encoding_format: 'bogus' }, 'encoding_format'],
  ['/v1/embeddings', 'CreateEmbeddingRequest', { model: 'm', input: [] }, 'input'],
  ['/v1/embeddings', 'CreateEmbeddingRequest', { model: 'm', input: 'x', dimensions: 0 }, 'dimensions'],
  ['/v1/responses', 'CreateResponse', { model: 'm', input: 'hi', max_output_tokens: 5 }, 'max_output_tokens'],
  ['/v1/responses', 'CreateResponse', { model: 'm', input: 'hi', temperature: 3 }, 'temperature'],
  ['/v1/responses', 'CreateResponse', { model: 'm', input: 42 }, 'input'],
];

describe('contract: request bodies follow the document', () => {
  for (const [path, schema, body, refusedField] of CASES)
    it(`${path} ${JSON.stringify(body)}`, async () => {
      const specSays = violations(schema, body);
      if (refusedField) expect(specSays, 'the document should forbid this body').not.toEqual([]);
      else expect(specSays).toEqual([]);

      const res = await sluice.app.request(path, chat(KEYS.a1, body));
      if (!refusedField) {
        expect(res.status, await res.clone().text()).toBe(200);
        return;
      }
      expect(res.status).toBe(400);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
      const error = ((await res.json()) as { error: { param: string | null; code: string } }).error;
      expect(error.code).toBe('invalid_value');
      expect(error.param).toBe(refusedField);
    });

  it('stream_options without a stream is refused, as the API refuses it', async () => {
    const res = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: msgs, stream_options: { include_usage: true } }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('stream_options');
  });

  it('unknown fields still reach the upstream', async () => {
    const res = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: msgs, vendor_extension: { top_k: 5 } }),
    );
    expect(res.status).toBe(200);
  });
});
