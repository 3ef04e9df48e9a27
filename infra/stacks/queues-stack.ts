import { Stack, type StackProps, Duration, RemovalPolicy, CfnOutput } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SPILLOVER_QUEUE_ATTRIBUTES as A } from '../../functions/runtime/contract.ts';

/** The spillover's FIFO attributes (functions/runtime/contract.ts), as queue props. */
const fifo = {
  fifo: A.FifoQueue === 'true',
  contentBasedDeduplication: (A.ContentBasedDeduplication as string) === 'true',
  deduplicationScope:
    A.DeduplicationScope === 'messageGroup' ? sqs.DeduplicationScope.MESSAGE_GROUP : sqs.DeduplicationScope.QUEUE,
  fifoThroughputLimit:
    A.FifoThroughputLimit === 'perMessageGroupId'
      ? sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID
      : sqs.FifoThroughputLimit.PER_QUEUE,
} satisfies sqs.QueueProps;

export interface QueuesStackProps extends StackProps {
  readonly stage: string;
  /** Receives before a spillover message is moved to the dead-letter queue. */
  readonly maxReceiveCount?: number;
}

/**
 * SQS spillover (FIFO, high throughput: envelopes the edge could not hand to the broker; a
 * redrive worker in the dispatchers moves them back) with its own FIFO dead-letter queue, and the
 * dead-letter queue (requests that exhausted their attempts, with reasons). All encrypted
 * with one customer-managed KMS key with rotation; TLS enforced by queue policy.
 */
export class QueuesStack extends Stack {
  readonly key: kms.Key;
  readonly spillover: sqs.Queue;
  readonly deadLetter: sqs.Queue;
  /** Spillover messages the redrive worker could not move, after maxReceiveCount receives. */
  readonly spilloverDeadLetter: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueuesStackProps) {
    super(scope, id, props);
    this.key = new kms.Key(this, 'QueueKey', {
      description: `Sluice ${props.stage} SQS spillover and dead-letter queues`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Every queue: the one rotating key, TLS only.
    const encrypted = {
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
    };
    this.deadLetter = new sqs.Queue(this, 'DeadLetter', {
      queueName: `sluice-${props.stage}-dead-letter`,
      ...encrypted,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // FIFO, as the edge sends (MessageGroupId = LiteTopic, a deduplication id): a FIFO queue
    // can only dead-letter into a FIFO queue, so the spillover has its own.
    this.spilloverDeadLetter = new sqs.Queue(this, 'SpilloverDeadLetter', {
      queueName: `sluice-${props.stage}-spillover-dead-letter.fifo`,
      ...fifo,
      ...encrypted,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.spillover = new sqs.Queue(this, 'Spillover', {
      queueName: `sluice-${props.stage}-spillover.fifo`,
      ...fifo,
      ...encrypted,
      retentionPeriod: Duration.days(4),
      // The redrive worker re-sends to the broker within this; longer than one broker send with retries.
      visibilityTimeout: Duration.seconds(60),
      receiveMessageWaitTime: Duration.seconds(20),
      deadLetterQueue: { queue: this.spilloverDeadLetter, maxReceiveCount: props.maxReceiveCount ?? 5 },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnOutput(this, 'SpilloverQueueUrl', { value: this.spillover.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetter.queueUrl });
    new CfnOutput(this, 'SpilloverDeadLetterQueueUrl', { value: this.spilloverDeadLetter.queueUrl });
  }
}
