import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { liteTopicName, MAX_LITE_TOPIC_LENGTH } from '../../../lib/queue/lite-topic-name.js';
import { RocketMQLiteQueue, type RocketMQLiteQueueOptions } from '../../../lib/queue/rocketmq/index.js';
import { Consume, LiteTopicQuotaError, QueueUnavailableError, type LiteMessage } from '../../../lib/queue/types.js';
import { freePort } from '../../../scripts/rocketmq/ports.ts';
import { until as waitUntil, useRocketMQ } from '../../support/rocketmq.ts';

// What the RocketMQ adapter adds over the conformance suite: names the proxy accepts,
// error mapping against a real proxy and broker, and a close that drains.
const { mq, control, closeLater, freshQueue: freshOn } = useRocketMQ();
const freshQueue = (extra: Partial<RocketMQLiteQueueOptions> = {}) =>
  freshOn('adapter', { orderly: true, maxAttempts: 16 }, extra);
const until = (what: string, check: () => boolean, timeoutMs = 30_000) => waitUntil(what, check, timeoutMs);

describe('LiteTopic names', () => {
  const cases: Array<[string, string, string, string]> = [
    ['realtime', 'acme', 'acme-chat', 'llama-3.1-8b-instruct'],
    ['realtime', 'acme', 'acme-etl', 'llama-3.1-8b-instruct'],
    ['batch', 'tenant.with.dots', 'svc.one', 'org/model:latest'],
    ['batch', 'tenant', 'svc', 'with.dots.org/model:latest'],
    ['offline', '租户', '账户', 'モデル'],
    ['realtime', 'a'.repeat(80), 'acct', 'model-one'],
    ['realtime', 'a'.repeat(80), 'acct', 'model-two'],
    ['realtime', 'under_score', 'x', 'x'],
    ['realtime', 'under', '5fscore-x', 'x'],
  ];
  const nameOf = ([tier, tenant, account, model]: [string, string, string, string]) =>
    liteTopicName({ tier, tenant, account, model });

  it('are distinct, within [A-Za-z0-9_-] and 64 bytes, including the long hashed form', () => {
    const names = cases.map(nameOf);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) {
      expect(n).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(Buffer.byteLength(n)).toBeLessThanOrEqual(MAX_LITE_TOPIC_LENGTH);
    }
  });

  it('are accepted by the proxy and come back unchanged on delivery', async () => {
    const queue = await freshQueue();
    const seen = new Map<string, string>();
    queue.subscribe(
      async (m) => {
        seen.set(m.body, m.liteTopic);
        return Consume.success;
      },
      { concurrency: 4 },
    );
    await queue.ready();
    const names = cases.map(nameOf);
    for (const n of names) await queue.send(n, `body:${n}`);
    await until('every name', () => seen.size === names.length);
    for (const n of names) expect(seen.get(`body:${n}`)).toBe(n);
  });
});

describe('RocketMQ adapter errors', () => {
  it('rejects a name the proxy refuses as a bad request, not as an outage to spill', async () => {
    const queue = await freshQueue();
    const err = await queue.send('realtime.acme.model', 'x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(QueueUnavailableError);
    expect(String(err)).toMatch(/lite topic/i);
  });

  it('reports an unreachable proxy as QueueUnavailableError', async () => {
    const queue = new RocketMQLiteQueue({
      endpoints: `127.0.0.1:${await freePort()}`,
      parentTopic: mq.parentTopic,
      consumerGroup: mq.consumerGroup,
      clock: systemClock,
      onDeadLetter: () => undefined,
      sendTimeoutMs: 1_000,
    });
    closeLater(() => queue.close());
    await expect(queue.send('lt', 'x')).rejects.toBeInstanceOf(QueueUnavailableError);
  });

  it('maps the broker refusing a new LiteTopic over its quota to LiteTopicQuotaError; existing LiteTopics keep working', async () => {
    const queue = await freshQueue();
    const existing = `exists-${randomUUID().slice(0, 8)}`;
    await queue.send(existing, 'before the cap');
    await control.updateBrokerConfig({ maxLmqConsumeQueueNum: 1 });
    try {
      const err = await queue.send(`fresh-${randomUUID().slice(0, 8)}`, 'x').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LiteTopicQuotaError);
      await expect(queue.send(existing, 'after the cap')).resolves.toHaveProperty('messageId');
    } finally {
      await control.updateBrokerConfig({ maxLmqConsumeQueueNum: 30_000 });
    }
  });
});

describe('RocketMQ adapter close', () => {
  it('waits for running handlers, acks their messages, and hands the rest to the next consumer', async () => {
    const queue = await freshQueue();
    const topic = `drain-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 5; i++) await queue.send(topic, String(i));

    const firstRun: LiteMessage[] = [];
    let finished = 0;
    const first = queue.subscribe(
      async (m) => {
        firstRun.push(m);
        await new Promise((r) => setTimeout(r, 1_500));
        finished++;
        return Consume.success;
      },
      { concurrency: 1 },
    );
    await until('the first handler to start', () => firstRun.length === 1);
    await first.close();
    expect(finished, 'close waited for the running handler').toBe(firstRun.length);

    const secondRun: string[] = [];
    queue.subscribe(
      async (m) => {
        secondRun.push(m.body);
        return Consume.success;
      },
      { concurrency: 1 },
    );
    const doneFirst = firstRun.map((m) => m.body);
    const rest = ['0', '1', '2', '3', '4'].filter((b) => !doneFirst.includes(b));
    await until('the rest after the restart', () => rest.every((b) => secondRun.includes(b)));
    // Handled-and-acked messages are not delivered again, and order holds.
    expect(secondRun.filter((b) => doneFirst.includes(b))).toEqual([]);
    expect(secondRun).toEqual(rest);
  });
});
