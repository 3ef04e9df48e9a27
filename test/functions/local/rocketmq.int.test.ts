import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { controlClient } from '../../../scripts/rocketmq/control.ts';
import { KEYS, startTestSluice } from '../../support/local-sluice.js';

// The same all-in-one process, with its queue on the real broker instead of the embedded engine.
describe('Sluice end to end on RocketMQ 5.5', () => {
  let sluice: LocalSluice;
  let client: OpenAI;
  beforeAll(async () => {
    const mq = inject('rocketmq');
    const id = randomUUID().slice(0, 8);
    const control = controlClient(mq.controlUrl);
    await control.createLiteTopic(`e2e-${id}`);
    await control.createWildcardGroup(`e2e-g-${id}`, `e2e-${id}`, { orderly: true, maxAttempts: 16 });
    sluice = await startTestSluice({
      rocketmq: { endpoints: mq.endpoints, parentTopic: `e2e-${id}`, consumerGroup: `e2e-g-${id}` },
    });
    client = new OpenAI({ apiKey: KEYS.a1, baseURL: `${sluice.url}/v1`, maxRetries: 0, timeout: 60_000 });
  });
  afterAll(() => sluice?.close());

  it('answers sync and streaming chat completions through LiteTopics on the broker', async () => {
    const whole = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'through the broker' }],
    });
    expect(whole.object).toBe('chat.completion');
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'through the broker' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(whole.choices[0]?.message.content);
  });

  it('serves two tenants side by side', async () => {
    const other = new OpenAI({ apiKey: KEYS.b1, baseURL: `${sluice.url}/v1`, maxRetries: 0, timeout: 60_000 });
    const done = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? client : other).chat.completions.create({
          model: 'm',
          messages: [{ role: 'user', content: `n${i}` }],
          max_tokens: 4,
        }),
      ),
    );
    expect(done.every((c) => c.object === 'chat.completion')).toBe(true);
  });
});
