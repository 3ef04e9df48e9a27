import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { within } from '../../../functions/edge/keepalive.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

const KEEPALIVE_MS = 200;
let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({ edge: { keepaliveMs: KEEPALIVE_MS } });
  await (await ask()).text(); // warm: the first request's set-up is not what is measured
});
afterAll(() => sluice.close());

// A long prompt: its prefill, slowed down, keeps the answer past the keepalive interval.
const ask = (extra: Record<string, unknown> = {}, content = 'word '.repeat(3000)) =>
  sluice.app.request(
    '/v1/chat/completions',
    chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content }], max_tokens: 8, ...extra }),
  );

describe('edge keepalive: an answer slower than the keepalive interval is not left silent', () => {
  it('within: the value when it comes first, undefined when the interval passes first', async () => {
    expect(await within(systemClock, Promise.resolve(7), 1_000)).toEqual({ value: 7 });
    expect(await within(systemClock, new Promise(() => {}), 10)).toBeUndefined();
  });

  it('a fast sync answer keeps its plain status and body', async () => {
    sluice.gpu.faults.setSlowdown(1);
    const res = await ask({}, 'x');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-sluice-keepalive')).toBeNull();
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
  });

  it('a slow sync answer: 200 at once, newlines while it waits, then the JSON body', async () => {
    sluice.gpu.faults.setSlowdown(200);
    try {
      const res = await ask();
      expect(res.status).toBe(200);
      expect(res.headers.get('x-sluice-keepalive')).toBe('whitespace');
      expect(res.headers.get('content-type')).toMatch(/application\/json/);
      const text = await res.text();
      const leading = /^\s*/.exec(text)![0];
      expect(leading.length).toBeGreaterThanOrEqual(2);
      const body = JSON.parse(text) as { object: string; choices: Array<{ message: { content: string } }> };
      expect(body.object).toBe('chat.completion');
      expect(body.choices[0]!.message.content.length).toBeGreaterThan(0);
    } finally {
      sluice.gpu.faults.setSlowdown(1);
    }
  });

  it('a stream waiting for a slot: SSE comments before the first chunk, then the chunks and [DONE]', async () => {
    sluice.gpu.faults.setSlowdown(200);
    // The model's four slots busy with slow requests: the stream waits in the queue.
    const busy = Array.from({ length: 4 }, async () => (await ask()).text());
    try {
      await new Promise((r) => setTimeout(r, 50));
      const res = await ask({ stream: true }, 'x');
      expect(res.status).toBe(200);
      const text = await res.text();
      const firstComment = text.indexOf(': keepalive');
      expect(firstComment).toBeGreaterThanOrEqual(0);
      expect(firstComment).toBeLessThan(text.indexOf('data:'));
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    } finally {
      sluice.gpu.faults.setSlowdown(1);
      await Promise.all(busy);
    }
  });
});
