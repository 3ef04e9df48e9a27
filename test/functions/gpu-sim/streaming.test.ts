import { describe, it, expect } from 'vitest';
import { chatBody, drain, lab, post, readSse, tracker } from './harness.js';

const fixed = { baseTokenMs: 20, prefillMsPerKToken: 40, contentionFactor: 1, slots: 8 };

async function streamOf(path: string, body: Record<string, unknown>, options: Record<string, unknown> = fixed) {
  const { clock, sim } = lab(options);
  const t0 = clock.now();
  const res = await post(sim, path, { ...body, stream: true });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reading = readSse(clock, res);
  await drain(clock);
  const { events } = await reading;
  return { events: events.map((e) => ({ ...e, at: e.at - t0 })), sim };
}

async function wholeOf(path: string, body: Record<string, unknown>, options: Record<string, unknown> = fixed) {
  const { clock, sim } = lab(options);
  const t0 = clock.now();
  const p = tracker(clock)(post(sim, path, body));
  await drain(clock);
  const { res, at } = await p;
  expect(res.status).toBe(200);
  return { json: await res.json(), ms: at - t0 };
}

describe('gpu-sim streaming', () => {
  it('streams chat chunks in order, each at its own time, then usage and [DONE]', async () => {
    const body = chatBody('Tell me about sluices.', { stream_options: { include_usage: true } });
    const { events, sim } = await streamOf('/v1/chat/completions', body);
    const whole = await wholeOf('/v1/chat/completions', body);

    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    for (const c of chunks) expect(c).toMatchObject({ object: 'chat.completion.chunk', model: 'sim-llm' });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);

    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const usageChunk = chunks.at(-1);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(whole.json.usage);
    const closing = chunks.at(-2);
    expect(closing.choices[0]).toMatchObject({ delta: {}, finish_reason: whole.json.choices[0].finish_reason });
    const content = chunks.slice(1, -2);
    for (const c of content) expect(c.usage).toBeNull();
    expect(content).toHaveLength(whole.json.usage.completion_tokens);
    expect(content.map((c) => c.choices[0].delta.content).join('')).toBe(whole.json.choices[0].message.content);

    // One token per chunk, each read when the GPU finished it, not all at the end
    // (3 digits: fractional ms on an epoch-sized clock lose precision below 1e-3).
    const times = events.slice(1, 1 + content.length).map((e) => e.at);
    const tokenMs = 20 * (1 + 1 / 8);
    const prefill = 40 * (whole.json.usage.prompt_tokens / 1000) * (1 + 1 / 8);
    times.forEach((t, i) => expect(t).toBeCloseTo(prefill + (i + 1) * tokenMs, 3));
    expect(times.at(-1)).toBeCloseTo(whole.ms, 3);
    expect(sim.stats()).toMatchObject({ served: 1, slotsBusy: 0 });
  });

  it('sends no usage chunk and no usage fields unless include_usage is asked for', async () => {
    const { events } = await streamOf('/v1/chat/completions', chatBody('no usage please', { max_tokens: 5 }));
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    for (const c of chunks) {
      expect(c).not.toHaveProperty('usage');
      expect(c.choices).toHaveLength(1);
    }
    expect(chunks).toHaveLength(1 + 5 + 1); // role, 5 tokens, finish
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
  });

  it('groups decodeStepTokens tokens per chunk without changing the text or the total time', async () => {
    const body = chatBody('group my tokens', { max_tokens: 10 });
    const one = await streamOf('/v1/chat/completions', body);
    const four = await streamOf('/v1/chat/completions', body, { ...fixed, decodeStepTokens: 4 });
    const content = (events: { data: string }[]) =>
      events.slice(1, -2).map((e) => JSON.parse(e.data).choices[0].delta.content as string);
    expect(content(one.events)).toHaveLength(10);
    expect(content(four.events)).toHaveLength(3); // 4 + 4 + 2
    expect(content(four.events).join('')).toBe(content(one.events).join(''));
    expect(four.events.at(-1)!.at).toBeCloseTo(one.events.at(-1)!.at, 3);
  });

  it('streams legacy completions as text_completion chunks equal to the whole text', async () => {
    const body = { model: 'sim-llm', prompt: 'Once upon a time', stream_options: { include_usage: true } };
    const { events } = await streamOf('/v1/completions', body);
    const whole = await wholeOf('/v1/completions', body);
    expect(whole.json.object).toBe('text_completion');

    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    for (const c of chunks) expect(c.object).toBe('text_completion');
    expect(chunks.at(-1).usage).toEqual(whole.json.usage);
    const text = chunks
      .slice(0, -1)
      .map((c) => c.choices[0].text)
      .join('');
    expect(text).toBe(whole.json.choices[0].text);
    expect(chunks.at(-2).choices[0].finish_reason).toBe(whole.json.choices[0].finish_reason);
  });
});
