/**
 * The simulated GPU answers as the OpenAI document says, for what the edge routes to it:
 * responses (sync and stream), token-id and null prompts, completions max_tokens 0,
 * nulls, and usage in streams only when asked.
 */
import { describe, expect, it } from 'vitest';
import { violations } from '../../support/openai-spec.js';
import { chatBody, drain, lab, post, readSse } from './harness.js';

async function json(path: string, body: unknown) {
  const l = lab();
  const p = post(l.sim, path, body);
  await drain(l.clock);
  const res = await p;
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function stream(path: string, body: unknown) {
  const l = lab();
  const p = post(l.sim, path, body);
  const sse = readSse(l.clock, await p);
  await drain(l.clock);
  return (await sse).events.map((e) => e.data);
}

describe('gpu-sim: the OpenAI document', () => {
  it('responses, sync: a Response object with usage', async () => {
    const { status, body } = await json('/v1/responses', {
      model: 'sim-llm',
      input: [{ role: 'user', content: 'hi' }],
      instructions: 'brief',
      max_output_tokens: null,
    });
    expect(status).toBe(200);
    expect(violations('Response', body)).toEqual([]);
    expect(body.status).toBe('completed');
  });

  it('responses, max_output_tokens cut short: status incomplete, with the reason', async () => {
    const l = lab({ minOutputTokens: 40, maxOutputTokens: 40 });
    const p = post(l.sim, '/v1/responses', { model: 'sim-llm', input: 'hi', max_output_tokens: 16 });
    await drain(l.clock);
    const body = (await (await p).json()) as Record<string, unknown>;
    expect(violations('Response', body)).toEqual([]);
    expect(body).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('responses, stream: spec events with rising sequence numbers and no [DONE]', async () => {
    const data = await stream('/v1/responses', { model: 'sim-llm', input: 'hi', stream: true });
    expect(data).not.toContain('[DONE]');
    const events = data.map((d) => JSON.parse(d) as { type: string; sequence_number: number });
    for (const e of events) expect(violations('ResponseStreamEvent', e)).toEqual([]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.type).toBe('response.completed');
  });

  it('completions: token-id, batched and null prompts, and max_tokens 0', async () => {
    for (const body of [
      { prompt: [1, 2, 3] },
      { prompt: [[1], [2, 3]] },
      { prompt: null },
      { prompt: 'x', max_tokens: 0 },
    ]) {
      const res = await json('/v1/completions', { model: 'sim-llm', ...body });
      expect(res.status).toBe(200);
      expect(violations('CreateCompletionResponse', res.body)).toEqual([]);
    }
  });

  it('chat streams: no usage field unless asked; when asked, null on each chunk and a closing usage chunk', async () => {
    const plain = (await stream('/v1/chat/completions', chatBody('hi', { stream: true, stream_options: null })))
      .slice(0, -1)
      .map((d) => JSON.parse(d) as object);
    for (const c of plain) expect(c).not.toHaveProperty('usage');
    const counted = (
      await stream('/v1/chat/completions', chatBody('hi', { stream: true, stream_options: { include_usage: true } }))
    )
      .slice(0, -1)
      .map((d) => JSON.parse(d) as { usage: unknown; choices: unknown[] });
    for (const c of counted) expect(violations('CreateChatCompletionStreamResponse', c)).toEqual([]);
    expect(counted.at(-1)!.choices).toEqual([]);
    expect(counted.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });
});
