import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';

/**
 * Creates (or finds) the spillover FIFO queue and the dead-letter queue; CreateQueue
 * is idempotent for identical attributes. In AWS the CDK stack owns them; this is
 * for local runs and tests.
 */
export async function ensureSluiceQueues(
  sqs: SQSClient,
  prefix = 'sluice',
): Promise<{ spilloverUrl: string; deadLetterUrl: string }> {
  const spill = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}-spillover.fifo`,
      Attributes: { FifoQueue: 'true', MessageRetentionPeriod: String(14 * 24 * 3600) },
    }),
  );
  const dead = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}-dead-letters`,
      Attributes: { MessageRetentionPeriod: String(14 * 24 * 3600) },
    }),
  );
  return { spilloverUrl: spill.QueueUrl!, deadLetterUrl: dead.QueueUrl! };
}
