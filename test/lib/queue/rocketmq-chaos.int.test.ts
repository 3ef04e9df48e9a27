import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, expect, inject, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { RocketMQLiteQueue } from '../../../lib/queue/rocketmq/index.js';
import {
  ensureSluiceQueues,
  RedriveWorker,
  SPILLED_PREFIX,
  Spillover,
  SpillingLiteQueue,
  SqsDeadLetterQueue,
} from '../../../lib/queue/sqs/index.js';
import { Consume } from '../../../lib/queue/types.js';
import { controlClient } from '../../../scripts/rocketmq/control.ts';

// kill -9 of the broker in the middle of a send loop, then a restart. Every envelope
// the edge accepted (send resolved) must end delivered (directly or after a spill and
// redrive) or dead-lettered with a reason. Sends refused outright are the edge's 503s
// and are not "accepted".
const mq = inject('rocketmq');
const elasticmq = inject('elasticmq');
const control = controlClient(mq.controlUrl);
const sqs = new SQSClient({
  endpoint: elasticmq.endpoint,
  region: elasticmq.region,
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
});
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('loses no accepted envelope when the broker is killed with -9 during a send loop', async () => {
  const id = randomUUID().slice(0, 8);
  const parentTopic = `chaos-${id}`;
  const consumerGroup = `chaos-g-${id}`;
  await control.createLiteTopic(parentTopic);
  await control.createWildcardGroup(consumerGroup, parentTopic, { orderly: true, maxAttempts: 16 });
  const { spilloverUrl, deadLetterUrl } = await ensureSluiceQueues(sqs, `chaos-${id}`);
  const dlq = new SqsDeadLetterQueue({ sqs, queueUrl: deadLetterUrl });

  const broker = new RocketMQLiteQueue({
    endpoints: mq.endpoints,
    parentTopic,
    consumerGroup,
    clock: systemClock,
    maxAttempts: 2,
    retryBackoffMs: () => 100,
    onDeadLetter: dlq.put,
    sendTimeoutMs: 2_000,
  });
  closers.push(() => broker.close());
  let spilled = 0;
  const edge = new SpillingLiteQueue(broker, new Spillover({ sqs, queueUrl: spilloverUrl }), {
    clock: systemClock,
    probeAfterMs: 1_000,
    onSpill: () => void spilled++,
  });
  const redrive = new RedriveWorker({
    sqs,
    queueUrl: spilloverUrl,
    target: broker,
    clock: systemClock,
    waitSeconds: 1,
    backoffMs: () => 1_000,
  });
  redrive.start();
  closers.push(() => redrive.stop());

  const delivered = new Set<string>();
  broker.subscribe(
    async (m) => {
      // Every 40th envelope is poison: it fails until it is dead-lettered.
      if (m.body.endsWith('#poison')) return Consume.failure('poison envelope');
      delivered.add(m.body);
      return Consume.success;
    },
    { concurrency: 16 },
  );
  await broker.ready();

  const accepted: string[] = [];
  let refused = 0;
  let acceptedBySpill = 0;
  const total = 600;
  const chaos = (async () => {
    await pause(4_000);
    await control.killBroker();
    await pause(6_000);
    await control.restartBroker();
  })();
  for (let i = 0; i < total; i++) {
    const body = `${id}/${i}${i % 40 === 39 ? '#poison' : ''}`;
    try {
      const { messageId } = await edge.send(`lt-${i % 8}`, body);
      accepted.push(body);
      if (messageId.startsWith(SPILLED_PREFIX)) acceptedBySpill++;
    } catch {
      refused++;
    }
    await pause(25);
  }
  await chaos;

  const poison = accepted.filter((b) => b.endsWith('#poison'));
  const healthy = accepted.filter((b) => !b.endsWith('#poison'));
  const deadLettered = new Set<string>();
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    for (const r of await dlq.list(100)) deadLettered.add(r.body);
    if (healthy.every((b) => delivered.has(b)) && poison.every((b) => deadLettered.has(b))) break;
    await pause(1_000);
  }
  const reasons = (await dlq.list(100)).map((r) => r.reason);
  const lost = accepted.filter((b) => !delivered.has(b) && !deadLettered.has(b));
  const summary = {
    sent: total,
    accepted: accepted.length,
    refused,
    acceptedBySpill,
    spillCalls: spilled,
    redriven: redrive.stats.redriven,
    delivered: healthy.filter((b) => delivered.has(b)).length,
    deadLettered: poison.filter((b) => deadLettered.has(b)).length,
    lost: lost.length,
  };
  console.log('chaos summary', JSON.stringify(summary));

  expect(acceptedBySpill, 'the outage was seen and absorbed by the spillover').toBeGreaterThan(0);
  expect(summary.redriven).toBeGreaterThanOrEqual(acceptedBySpill);
  expect(lost).toEqual([]);
  expect(reasons.every((r) => r.includes('poison envelope'))).toBe(true);
}, 400_000);
