import { Stack, type StackProps, Duration, RemovalPolicy, CfnOutput } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

export interface QueuesStackProps extends StackProps {
  readonly stage: string;
  /** Receives before a spillover message is moved to the dead-letter queue. */
  readonly maxReceiveCount?: number;
}

/**
 * SQS spillover (envelopes the edge could not hand to the broker; a redrive worker in
 * the dispatchers moves them back) and the dead-letter queue (requests that exhausted
 * their attempts, and spillover messages that could not be redriven). Both encrypted
 * with one customer-managed KMS key with rotation; TLS enforced by queue policy.
 */
export class QueuesStack extends Stack {
  readonly key: kms.Key;
  readonly spillover: sqs.Queue;
  readonly deadLetter: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueuesStackProps) {
    super(scope, id, props);
    this.key = new kms.Key(this, 'QueueKey', {
      description: `Sluice ${props.stage} SQS spillover and dead-letter queues`,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.deadLetter = new sqs.Queue(this, 'DeadLetter', {
      queueName: `sluice-${props.stage}-dead-letter`,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.spillover = new sqs.Queue(this, 'Spillover', {
      queueName: `sluice-${props.stage}-spillover`,
      encryption: sqs.QueueEncryption.KMS,
      encryptionMasterKey: this.key,
      dataKeyReuse: Duration.minutes(5),
      enforceSSL: true,
      retentionPeriod: Duration.days(4),
      // The redrive worker re-sends to the broker within this; longer than one broker send with retries.
      visibilityTimeout: Duration.seconds(60),
      receiveMessageWaitTime: Duration.seconds(20),
      deadLetterQueue: { queue: this.deadLetter, maxReceiveCount: props.maxReceiveCount ?? 5 },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    new CfnOutput(this, 'SpilloverQueueUrl', { value: this.spillover.queueUrl });
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetter.queueUrl });
  }
}
