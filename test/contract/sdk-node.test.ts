/**
 * The official Node `openai` SDK, unchanged, against a local Sluice over HTTP: every
 * route it would use, streaming and not, including a loop that reads `choices[0]` on
 * every chat chunk (which breaks if Sluice relays a usage chunk nobody asked for).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../functions/local/sluice.js';
import { KEYS, startTestSluice } from '../support/local-sluice.js';

let sluice: LocalSluice;
let client: OpenAI;
beforeAll(async () => {
  sluice = await startTestSluice();
  client = new OpenAI({ apiKey: KEYS.a1, baseURL: `${sluice.url}/v1`, maxRetries: 0 });
});
afterAll(() => sluice.close());

const messages = [{ role: 'user' as const, content: 'tell me about sluices' }];

describe('Node openai SDK against Sluice', () => {
  it('chat completions, sync', async () => {
    const res = await client.chat.completions.create({ model: 'm', messages, max_completion_tokens: 8 });
    expect(res.object).toBe('chat.completion');
    expect(res.choices[0]!.message.content!.length).toBeGreaterThan(0);
    expect(res.usage!.total_tokens).toBeGreaterThan(0);
  });

  it('chat completions, stream: a loop reading chunk.choices[0] on every chunk', async () => {
    const stream = await client.chat.completions.create({ model: 'm', messages, stream: true });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      text += chunk.choices[0]!.delta.content ?? '';
      expect(chunk.usage).toBeUndefined();
    }
    expect(chunks).toBeGreaterThan(2);
    expect(text.length).toBeGreaterThan(0);
  });

  it('chat completions, stream with include_usage: usage arrives in the last chunk', async () => {
    const stream = await client.chat.completions.create({
      model: 'm',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const all = [];
    for await (const chunk of stream) all.push(chunk);
    expect(all.at(-1)!.choices).toEqual([]);
    expect(all.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
  });

  it('completions, sync and stream', async () => {
    const res = await client.completions.create({ model: 'm', prompt: 'Once upon', max_tokens: 6 });
    expect(res.choices[0]!.text.length).toBeGreaterThan(0);
    const stream = await client.completions.create({ model: 'm', prompt: [1, 2, 3], max_tokens: 6, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]!.text;
    expect(text.length).toBeGreaterThan(0);
  });

  it('embeddings (the SDK asks for base64 and decodes it)', async () => {
    const res = await client.embeddings.create({ model: 'm', input: ['a', 'b'] });
    expect(res.data).toHaveLength(2);
    expect(res.data[0]!.embedding.every((x) => typeof x === 'number')).toBe(true);
    expect(res.data[0]!.embedding.length).toBeGreaterThan(0);
  });

  it('models: list and retrieve', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) ids.push(m.id);
    expect(ids).toEqual(['m']);
    expect(await client.models.retrieve('m')).toMatchObject({ id: 'm', object: 'model' });
    await expect(client.models.retrieve('nope')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('responses, sync', async () => {
    const res = await client.responses.create({ model: 'm', input: 'hello', instructions: 'be brief' });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text.length).toBeGreaterThan(0);
    expect(res.usage!.total_tokens).toBeGreaterThan(0);
  });

  it('responses, stream', async () => {
    const stream = await client.responses.create({ model: 'm', input: 'hello', stream: true });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text.length).toBeGreaterThan(0);
  });

  it('errors surface as the SDK’s typed errors', async () => {
    await expect(client.chat.completions.create({ model: 'm', messages, n: 0 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
    });
    const bad = new OpenAI({ apiKey: 'sk-nope', baseURL: `${sluice.url}/v1`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
