import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { EmbeddedLiteQueue } from '../../../lib/queue/embedded.js';
import { RocketMQLiteQueue } from '../../../lib/queue/rocketmq/index.js';
import {
  ensureSluiceQueues,
  RedriveWorker,
  SPILLED_PREFIX,
  Spillover,
  SpillingLiteQueue,
  SqsDeadLetterQueue,
} from '../../../lib/queue/sqs/index.js';
import { Consume, QueueUnavailableError, type LiteQueue } from '../../../lib/queue/types.js';
import { freePort } from '../../../scripts/rocketmq/ports.ts';

// SQS spillover and dead letters against ElasticMQ (SQS JSON protocol). The
// "unavailable broker" is a real RocketMQ client pointed at a port nobody listens on.
const elasticmq = inject('elasticmq');
const sqs = new SQSClient({
  endpoint: elasticmq.endpoint,
  region: elasticmq.region,
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
});
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function queues() {
  return ensureSluiceQueues(sqs, `t-${randomUUID().slice(0, 8)}`);
}

async function unreachableBroker(): Promise<LiteQueue> {
  const q = new RocketMQLiteQueue({
    endpoints: `127.0.0.1:${await freePort()}`,
    parentTopic: 'sluice-requests',
    consumerGroup: 'sluice-dispatchers',
    clock: systemClock,
    onDeadLetter: () => undefined,
    sendTimeoutMs: 1_000,
  });
  closers.push(() => q.close());
  return q;
}

function embedded(onDeadLetter = (_: unknown) => undefined): EmbeddedLiteQueue {
  const q = new EmbeddedLiteQueue({ clock: systemClock, maxAttempts: 2, retryBackoffMs: () => 50, onDeadLetter });
  closers.push(() => q.close());
  return q;
}

async function collect(q: LiteQueue, expected: number): Promise<Map<string, string[]>> {
  const got = new Map<string, string[]>();
  let n = 0;
  q.subscribe(
    async (m) => {
      got.set(m.liteTopic, [...(got.get(m.liteTopic) ?? []), m.body]);
      n++;
      return Consume.success;
    },
    { concurrency: 4 },
  );
  const deadline = Date.now() + 20_000;
  while (n < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return got;
}

describe('SQS spillover', () => {
  it('spills when the broker is unreachable, and the redrive worker moves envelopes back in order per LiteTopic', async () => {
    const { spilloverUrl } = await queues();
    const spilled: string[] = [];
    const spilling = new SpillingLiteQueue(await unreachableBroker(), new Spillover({ sqs, queueUrl: spilloverUrl }), {
      clock: systemClock,
      probeAfterMs: 60_000,
      onSpill: (lt) => spilled.push(lt),
    });
    const sent: Array<[string, string]> = [];
    for (let i = 0; i < 12; i++) {
      const lt = `lt-${i % 3}`;
      const { messageId } = await spilling.send(lt, `${lt}/${i}`);
      expect(messageId.startsWith(SPILLED_PREFIX)).toBe(true);
      sent.push([lt, `${lt}/${i}`]);
    }

    expect(spilled).toHaveLength(12);

    const target = embedded();
    const worker = new RedriveWorker({ sqs, queueUrl: spilloverUrl, target, clock: systemClock });
    expect(await worker.drainOnce()).toBe(12);
    const got = await collect(target, 12);
    for (const lt of ['lt-0', 'lt-1', 'lt-2']) {
      expect(got.get(lt)).toEqual(sent.filter(([t]) => t === lt).map(([, b]) => b));
    }
    expect(await worker.drainOnce()).toBe(0);
  });

  it('leaves envelopes spilled while the target still refuses, then moves them all in order', async () => {
    const { spilloverUrl } = await queues();
    const spillover = new Spillover({ sqs, queueUrl: spilloverUrl });
    for (let i = 0; i < 6; i++) await spillover.spill('lt-x', `x/${i}`);

    const stillDown = new RedriveWorker({
      sqs,
      queueUrl: spilloverUrl,
      target: await unreachableBroker(),
      clock: systemClock,
    });
    expect(await stillDown.drainOnce()).toBe(0);
    expect(stillDown.stats.failedAttempts).toBe(1);

    const target = embedded();
    const worker = new RedriveWorker({ sqs, queueUrl: spilloverUrl, target, clock: systemClock, waitSeconds: 1 });
    worker.start();
    closers.push(() => worker.stop());
    const got = await collect(target, 6);
    expect(got.get('lt-x')).toEqual([0, 1, 2, 3, 4, 5].map((i) => `x/${i}`));
  });

  it('a broker outage longer than the receive limit dead-letters nothing: held envelopes wait, the expired one is answered', async () => {
    const prefix = `t-${randomUUID().slice(0, 8)}`;
    const dlqUrl = (
      await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-dlq.fifo`, Attributes: { FifoQueue: 'true' } }))
    ).QueueUrl!;
    const dlqArn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] })))
      .Attributes!.QueueArn!;
    const spilloverUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: `${prefix}-spillover.fifo`,
          Attributes: {
            FifoQueue: 'true',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
          },
        }),
      )
    ).QueueUrl!;
    const spillover = new Spillover({ sqs, queueUrl: spilloverUrl });
    const now = Date.now();
    const body = (i: number, deadline: number) => JSON.stringify({ id: `r${i}`, deadline });
    await spillover.spill('lt-a', body(0, now + 60_000));
    await spillover.spill('lt-b', body(1, now + 1_500));
    await spillover.spill('lt-a', body(2, now + 60_000));

    let down = true;
    const target = embedded();
    const flaky: LiteQueue = {
      send: (lt, b) => (down ? Promise.reject(new QueueUnavailableError('broker down')) : target.send(lt, b)),
      subscribe: (h, o) => target.subscribe(h, o),
      close: async () => {},
    };
    const answered: Array<{ body: string; reason: string; status?: number }> = [];
    const worker = new RedriveWorker({
      sqs,
      queueUrl: spilloverUrl,
      target: flaky,
      clock: systemClock,
      waitSeconds: 1,
      maxReceiveCount: 2,
      backoffMs: () => 200,
      onUndeliverable: async (d) =>
        void answered.push({ body: d.message.body, reason: d.reason, status: d.httpStatus }),
    });
    worker.start();
    closers.push(() => worker.stop());
    // With the batch given back after each refusal, two receives would dead-letter it within a second.
    await new Promise((r) => setTimeout(r, 4_000));
    expect(worker.stats.failedAttempts).toBeGreaterThan(5);
    down = false;
    const got = await collect(target, 2);
    expect(got.get('lt-a')).toEqual([body(0, now + 60_000), body(2, now + 60_000)]);
    expect(got.has('lt-b')).toBe(false);
    expect(answered).toEqual([
      { body: body(1, now + 1_500), reason: expect.stringContaining('deadline'), status: 503 },
    ]);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1 }));
    expect(dead.Messages ?? []).toEqual([]);
  });

  it('answers a spilled envelope already past its deadline instead of sending it through the broker', async () => {
    const { spilloverUrl } = await queues();
    const spillover = new Spillover({ sqs, queueUrl: spilloverUrl });
    const now = Date.now();
    const body = (i: number, deadline: number) => JSON.stringify({ id: `r${i}`, deadline });
    // Spilled during an outage; by the time the broker takes envelopes again, the first two expired.
    await spillover.spill('lt-a', body(0, now - 10_000));
    await spillover.spill('lt-a', body(1, now - 5_000));
    await spillover.spill('lt-a', body(2, now + 60_000));
    await spillover.spill('lt-b', body(3, now + 60_000));

    const target = embedded();
    const sent: string[] = [];
    const counting: LiteQueue = {
      send: (lt, b) => (sent.push(b), target.send(lt, b)),
      subscribe: (h, o) => target.subscribe(h, o),
      close: async () => {},
    };
    const answered: string[] = [];
    const worker = new RedriveWorker({
      sqs,
      queueUrl: spilloverUrl,
      target: counting,
      clock: systemClock,
      onUndeliverable: async (d) => void answered.push(d.message.body),
    });
    expect(await worker.drainOnce()).toBe(2);
    expect(sent).toEqual([body(2, now + 60_000), body(3, now + 60_000)]);
    expect(answered.sort()).toEqual([body(0, now - 10_000), body(1, now - 5_000)]);
    expect(worker.stats.undeliverable).toBe(2);
    expect(await worker.drainOnce()).toBe(0);
  });

  it('retries a held batch by its first deadline, so an envelope expiring during the backoff is answered on time', async () => {
    const { spilloverUrl } = await queues();
    const spillover = new Spillover({ sqs, queueUrl: spilloverUrl });
    const now = Date.now();
    const body = JSON.stringify({ id: 'r0', deadline: now + 1_500 });
    await spillover.spill('lt-a', body);
    const refusing: LiteQueue = {
      send: () => Promise.reject(new QueueUnavailableError('broker down')),
      subscribe: () => ({ close: async () => {} }),
      close: async () => {},
    };
    let answeredAt = 0;
    const worker = new RedriveWorker({
      sqs,
      queueUrl: spilloverUrl,
      target: refusing,
      clock: systemClock,
      waitSeconds: 1,
      // Far longer than the deadline: without the deadline bound the answer waits for it.
      backoffMs: () => 20_000,
      onUndeliverable: async () => void (answeredAt = Date.now()),
    });
    worker.start();
    closers.push(() => worker.stop());
    const until = Date.now() + 10_000;
    while (answeredAt === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(answeredAt).toBeGreaterThan(0);
    expect(answeredAt - (now + 1_500)).toBeLessThan(3_000);
  });

  it('does not spill a request the queue refuses for a reason other than an outage', async () => {
    const { spilloverUrl } = await queues();
    const spilling = new SpillingLiteQueue(embedded(), new Spillover({ sqs, queueUrl: spilloverUrl }), {
      clock: systemClock,
    });
    // The embedded engine is up: the send goes straight to it.
    const { messageId } = await spilling.send('lt-ok', 'fine');
    expect(messageId.startsWith(SPILLED_PREFIX)).toBe(false);
  });
});

describe('SQS dead-letter queue', () => {
  it('keeps each failed envelope with its reason; the operator lists and redrives them', async () => {
    const { deadLetterUrl } = await queues();
    const dlq = new SqsDeadLetterQueue({ sqs, queueUrl: deadLetterUrl });
    const pending: Promise<void>[] = [];
    const failing = embedded((d) => void pending.push(dlq.put(d as Parameters<typeof dlq.put>[0])));
    failing.subscribe(async (m) => (m.body === 'poison' ? Consume.failure('upstream 500 twice') : Consume.success), {
      concurrency: 1,
    });
    await failing.send('lt-d', 'poison');
    await failing.send('lt-d', 'ok');
    const deadline = Date.now() + 10_000;
    while (pending.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await Promise.all(pending);

    const listed = await dlq.list();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ liteTopic: 'lt-d', body: 'poison', attempt: 2 });
    expect(listed[0]!.reason).toContain('upstream 500 twice');
    // Listing leaves them in place.
    expect(await dlq.list()).toHaveLength(1);

    const target = embedded();
    expect(await dlq.redrive(target)).toBe(1);
    const got = await collect(target, 1);
    expect(got.get('lt-d')).toEqual(['poison']);
    expect(await dlq.list()).toHaveLength(0);
  });
});
