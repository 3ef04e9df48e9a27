/**
 * Per-test fixtures on the RocketMQ the integration global setup started
 * (test/setup/rocketmq.setup.ts): a fresh LITE parent topic and wildcard group per
 * test, so tests never see each other's messages, and everything opened closed after
 * each test.
 */
import { randomUUID } from 'node:crypto';
import {
  LitePushConsumerBuilder,
  Producer,
  type ConsumeResult,
  type LitePushConsumer,
  type MessageView,
} from 'rocketmq-client-nodejs';
import { afterEach, inject } from 'vitest';
import { systemClock } from '../../functions/runtime/system-clock.js';
import { RocketMQLiteQueue, type RocketMQLiteQueueOptions } from '../../lib/queue/rocketmq/index.js';
import type { WildcardGroupOptions } from '../../scripts/rocketmq/admin.ts';
import { controlClient } from '../../scripts/rocketmq/control.ts';

export const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `check` until it holds; fails naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
}

/**
 * Sends until the broker takes it: after a broker restart, sends fail until the proxy
 * sees the broker again (the edge would spill them). Resolves when the send did.
 */
export async function sendOnceBack(
  queue: { send(liteTopic: string, body: string): Promise<unknown> },
  liteTopic: string,
  body: string,
  timeoutMs: number,
  everyMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await queue.send(liteTopic, body);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await pause(everyMs);
    }
  }
}

/** Call at a test file's top level: registers the after-each cleanup. */
export function useRocketMQ() {
  const mq = inject('rocketmq');
  const control = controlClient(mq.controlUrl);
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function freshTopicAndGroup(
    prefix: string,
    group: Partial<WildcardGroupOptions>,
  ): Promise<{ topic: string; group: string }> {
    const id = randomUUID().slice(0, 8);
    const names = { topic: `${prefix}-${id}`, group: `${prefix}-g-${id}` };
    await control.createLiteTopic(names.topic);
    await control.createWildcardGroup(names.group, names.topic, group);
    return names;
  }

  return {
    mq,
    control,
    /** Closed after the test, last opened first. */
    closeLater(close: () => Promise<void>) {
      closers.push(close);
    },
    freshTopicAndGroup,
    /** The adapter on a fresh topic and group. */
    async freshQueue(
      prefix: string,
      group: Partial<WildcardGroupOptions>,
      extra: Partial<RocketMQLiteQueueOptions> = {},
    ) {
      const { topic, group: consumerGroup } = await freshTopicAndGroup(prefix, group);
      const queue = new RocketMQLiteQueue({
        endpoints: mq.endpoints,
        parentTopic: topic,
        consumerGroup,
        clock: systemClock,
        onDeadLetter: () => undefined,
        ...extra,
      });
      closers.push(() => queue.close());
      return queue;
    },
    /** rocketmq-client-nodejs straight, without the adapter. */
    async producer(topic: string): Promise<Producer> {
      const p = new Producer({ endpoints: mq.endpoints, namespace: '', topic, maxAttempts: 3 });
      await p.startup();
      closers.push(() => p.shutdown());
      return p;
    },
    async consumer(
      topic: string,
      group: string,
      consume: (m: MessageView) => Promise<ConsumeResult>,
    ): Promise<LitePushConsumer> {
      const c = await new LitePushConsumerBuilder()
        .setClientConfiguration({ endpoints: mq.endpoints, namespace: '' })
        .setConsumerGroup(group)
        .bindTopic(topic)
        .setMessageListener({ consume })
        .build();
      closers.push(() => c.close());
      return c;
    },
    send(p: Producer, topic: string, liteTopic: string, body: string) {
      return p.send({ topic, liteTopic, body: Buffer.from(body) });
    },
  };
}
