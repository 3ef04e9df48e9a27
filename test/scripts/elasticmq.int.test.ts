import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { describe, expect, inject, it } from 'vitest';

// Smoke test of the ElasticMQ started by test/setup/elasticmq.setup.ts, through the
// same @aws-sdk/client-sqs (SQS JSON protocol) Sluice uses against AWS.
const mq = inject('elasticmq');
const sqs = new SQSClient({
  endpoint: mq.endpoint,
  region: mq.region,
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
});

describe(`ElasticMQ ${mq.version}`, () => {
  it('sends, receives and deletes a message', async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `smoke-${randomUUID().slice(0, 8)}` }));
    const body = JSON.stringify({ id: randomUUID(), note: 'spilled envelope' });
    await sqs.send(
      new SendMessageCommand({
        QueueUrl,
        MessageBody: body,
        MessageAttributes: { liteTopic: { DataType: 'String', StringValue: 'realtime-acme-m' } },
      }),
    );
    const got = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 2,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(got.Messages).toHaveLength(1);
    const message = got.Messages![0]!;
    expect(message.Body).toBe(body);
    expect(message.MessageAttributes?.liteTopic?.StringValue).toBe('realtime-acme-m');

    await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle! }));
    const attrs = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(attrs.Attributes?.ApproximateNumberOfMessages).toBe('0');
    expect(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('0');
  });

  it('keeps FIFO order per message group on a .fifo queue', async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `smoke-${randomUUID().slice(0, 8)}.fifo`,
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' },
      }),
    );
    for (let i = 0; i < 5; i++) {
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: `m${i}`, MessageGroupId: 'lt-a' }));
    }
    const bodies: string[] = [];
    while (bodies.length < 5) {
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
      for (const m of got.Messages ?? []) {
        bodies.push(m.Body!);
        await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle! }));
      }
    }
    expect(bodies).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  });
});
