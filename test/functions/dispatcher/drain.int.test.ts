/**
 * The dispatcher process on a real broker: SIGTERM while a call is at a GPU that
 * never answers. It exits within its drain time (plus a bounded grace), and the
 * message comes back un-acked, to be served by the next dispatcher.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { liteTopicName } from '../../../lib/queue/lite-topic-name.js';
import { RocketMQLiteQueue } from '../../../lib/queue/rocketmq/index.js';
import { Consume } from '../../../lib/queue/types.js';
import { spawnDispatcher } from '../../support/dispatcher-process.js';
import { until, useRocketMQ } from '../../support/rocketmq.js';

const rmq = useRocketMQ();
const DRAIN_MS = 1_500;
/** Cutting calls, closing the consumer and the parts, and the process's own exit. */
const GRACE_MS = 6_000;

/** A GPU endpoint that takes calls and never answers them. */
async function silentGpu() {
  const held: IncomingMessage[] = [];
  const server = createServer((req) => void held.push(req));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rmq.closeLater(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, held };
}

describe('dispatcher process: SIGTERM drains in bounded time', () => {
  it('hands a call still at the GPU back to the broker after the drain time, and exits', async () => {
    const gpu = await silentGpu();
    const { topic, group } = await rmq.freshTopicAndGroup('drain', { orderly: true, maxAttempts: 16 });
    const { child, exited, logs } = spawnDispatcher(gpu.url, {
      SLUICE_ROCKETMQ_ENDPOINTS: rmq.mq.endpoints,
      SLUICE_ROCKETMQ_TOPIC: topic,
      SLUICE_ROCKETMQ_GROUP: group,
      SLUICE_DRAIN_MS: String(DRAIN_MS),
    });
    rmq.closeLater(async () => void child.kill('SIGKILL'));
    await until('the dispatcher to consume', () => logs().includes('dispatcher consuming'));

    const now = Date.now();
    const liteTopic = liteTopicName({ tier: 'realtime', tenant: 'ta', account: 'ta', model: 'm' });
    const envelope: Envelope = {
      id: `req_drain_${randomUUID().slice(0, 8)}`,
      account: 'a1',
      tenant: 'ta',
      tier: 'realtime',
      model: 'm',
      liteTopic,
      operation: 'chat.completions',
      body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      mode: 'async',
      enqueuedAt: now,
      deadline: now + 300_000,
      tokenEstimate: 8,
      charged: [],
      paceFactor: 1,
    };
    const producer = await rmq.producer(topic);
    await rmq.send(producer, topic, liteTopic, encodeEnvelope(envelope));
    await until('the call to reach the GPU', () => gpu.held.length === 1);

    const stopAt = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const stoppedMs = Date.now() - stopAt;
    expect(stoppedMs).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(stoppedMs).toBeLessThan(DRAIN_MS + GRACE_MS);
    expect(logs()).toContain('drain time over');

    // The next dispatcher of the group gets the message: it was handed back, not acked,
    // and not taken again by a receive of the dying process (a pop that dies with the
    // process leaves the message invisible for the broker's default 60 s).
    const next = new RocketMQLiteQueue({
      endpoints: rmq.mq.endpoints,
      parentTopic: topic,
      consumerGroup: group,
      clock: systemClock,
      onDeadLetter: () => undefined,
    });
    rmq.closeLater(() => next.close());
    const redelivered: string[] = [];
    next.subscribe(
      async (m) => {
        redelivered.push((JSON.parse(m.body) as Envelope).id);
        return Consume.success;
      },
      { concurrency: 4 },
    );
    const subscribedAt = Date.now();
    try {
      await until('the message to come back', () => redelivered.length > 0, 30_000);
    } catch (err) {
      console.log(`dispatcher log:\n${logs()}`);
      throw err;
    }
    console.log(`handed-back message served again ${Date.now() - subscribedAt} ms after the next consumer subscribed`);
    expect(redelivered[0]).toBe(envelope.id);
  }, 180_000);
});
