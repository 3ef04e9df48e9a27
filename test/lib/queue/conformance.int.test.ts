import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { EmbeddedLiteQueue } from '../../../lib/queue/embedded.js';
import { RocketMQLiteQueue } from '../../../lib/queue/rocketmq/index.js';
import { controlClient } from '../../../scripts/rocketmq/control.ts';
import { runLiteQueueConformance } from './conformance.js';

runLiteQueueConformance(
  'embedded',
  async (opts) => ({
    queue: new EmbeddedLiteQueue({
      clock: systemClock,
      maxAttempts: opts.maxAttempts,
      retryBackoffMs: opts.retryBackoffMs,
      onDeadLetter: opts.onDeadLetter,
    }),
  }),
  { manyLiteTopics: 10_000 },
);

const mq = inject('rocketmq');
const control = controlClient(mq.controlUrl);

runLiteQueueConformance(
  `RocketMQ ${mq.version}`,
  async (opts) => {
    // A parent topic and group per case, so no case sees another's leftovers.
    const id = randomUUID().slice(0, 8);
    const parentTopic = `conf-${id}`;
    const consumerGroup = `conf-g-${id}`;
    await control.createLiteTopic(parentTopic);
    await control.createWildcardGroup(consumerGroup, parentTopic, { orderly: true, maxAttempts: 16 });
    const queue = new RocketMQLiteQueue({
      endpoints: mq.endpoints,
      parentTopic,
      consumerGroup,
      clock: systemClock,
      maxAttempts: opts.maxAttempts,
      retryBackoffMs: opts.retryBackoffMs,
      onDeadLetter: opts.onDeadLetter,
    });
    return { queue, ready: () => queue.ready() };
  },
  { manyLiteTopics: 10_000, deliveryTimeoutMs: 30_000 },
);
