import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';
import { runCli } from '../../../functions/cli/sluice.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { decodeEnvelope, encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { RocketMQLiteQueue } from '../../../lib/queue/rocketmq/index.js';
import { ensureSluiceQueues, SqsDeadLetterQueue } from '../../../lib/queue/sqs/index.js';
import { Consume } from '../../../lib/queue/types.js';
import { controlClient } from '../../../scripts/rocketmq/control.ts';

async function sluice(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    now: () => Date.now(),
    env: { AWS_ACCESS_KEY_ID: 'x' },
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('sluice dlq', () => {
  it('lists dead letters with their reasons and redrives the chosen ones into RocketMQ with a fresh deadline', async () => {
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const sqsInfo = inject('elasticmq');
    const id = randomUUID().slice(0, 8);
    const { deadLetterUrl } = await ensureSluiceQueues(
      new SQSClient({ endpoint: sqsInfo.endpoint, region: sqsInfo.region }),
      `dlq-${id}`,
    );
    const dlq = new SqsDeadLetterQueue({
      sqs: new SQSClient({ endpoint: sqsInfo.endpoint, region: sqsInfo.region }),
      queueUrl: deadLetterUrl,
    });
    const envelope = (n: number): Envelope => ({
      id: `req_${id}_${n}`,
      account: 'a',
      tenant: 't',
      tier: 'batch',
      model: 'm',
      liteTopic: 'batch-t-m',
      operation: 'chat.completions',
      body: { model: 'm', messages: [] },
      mode: 'async',
      enqueuedAt: 1_000,
      deadline: 301_000,
      tokenEstimate: 10,
      charged: [],
      reservoirKey: 'k',
      paceFactor: 1,
    });
    await dlq.put({
      message: { messageId: 'm1', liteTopic: 'batch-t-m', body: encodeEnvelope(envelope(1)), attempt: 3 },
      reason: 'upstream answered 503',
    });
    await dlq.put({
      message: { messageId: 'm2', liteTopic: 'batch-t-m', body: encodeEnvelope(envelope(2)), attempt: 1 },
      reason: 'expired in queue',
    });
    const common = ['--dlq-url', deadLetterUrl, '--sqs-endpoint', sqsInfo.endpoint, '--region', sqsInfo.region];

    const listed = await sluice('dlq', 'list', ...common);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`batch-t-m\treq_${id}_1\tupstream answered 503`);
    expect(listed.out).toContain(`req_${id}_2\texpired in queue`);

    const mq = inject('rocketmq');
    await controlClient(mq.controlUrl).createLiteTopic(`dlq-${id}`);
    await controlClient(mq.controlUrl).createWildcardGroup(`dlq-g-${id}`, `dlq-${id}`, {
      orderly: true,
      maxAttempts: 16,
    });
    const consumer = new RocketMQLiteQueue({
      endpoints: mq.endpoints,
      parentTopic: `dlq-${id}`,
      consumerGroup: `dlq-g-${id}`,
      clock: systemClock,
      onDeadLetter: () => undefined,
    });
    const received: Envelope[] = [];
    const sub = consumer.subscribe(
      async (m) => {
        received.push(decodeEnvelope(m.body));
        return Consume.success;
      },
      { concurrency: 4 },
    );
    try {
      const before = Date.now();
      const redriven = await sluice(
        'dlq',
        'redrive',
        ...common,
        '--reason',
        '503',
        '--rocketmq',
        mq.endpoints,
        '--topic',
        `dlq-${id}`,
        '--group',
        `dlq-g-${id}`,
      );
      expect(redriven).toMatchObject({ code: 0, out: 'redrove 1 dead letter' });
      for (let i = 0; i < 300 && received.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
      expect(received.map((e) => e.id)).toEqual([`req_${id}_1`]);
      expect(received[0]!.enqueuedAt).toBeGreaterThanOrEqual(before);
      expect(received[0]!.deadline - received[0]!.enqueuedAt).toBe(300_000);
      expect(received[0]!.reservoirKey).toBeUndefined();
      // The expired one stays for the operator to look at.
      expect((await sluice('dlq', 'list', ...common)).out).toContain('expired in queue');
      expect((await sluice('dlq', 'list', ...common)).out).not.toContain('upstream answered 503');
    } finally {
      await sub.close();
      await consumer.close();
    }
  });

  it('says what is missing', async () => {
    expect((await sluice('dlq', 'list')).err).toMatch(/--dlq-url/);
  });
});
