import { createHash } from 'node:crypto';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Clock } from '../../clock/clock.js';
import {
  QueueUnavailableError,
  type LiteQueue,
  type MessageHandler,
  type SubscribeOptions,
  type Subscription,
} from '../types.js';

/** Marks a message id that points at the spillover queue, not the broker. */
export const SPILLED_PREFIX = 'sqs:';

export interface SpilloverOptions {
  readonly sqs: SQSClient;
  /** A FIFO queue (`.fifo`): MessageGroupId = LiteTopic keeps each LiteTopic's order. */
  readonly queueUrl: string;
  /** Told of every envelope sent here, whichever path sent it (telemetry, the spillover alert). */
  readonly onSpill?: (liteTopic: string, body: string) => void;
}

/**
 * Writes envelopes the broker could not take to the SQS spillover queue. Each
 * LiteTopic is one FIFO message group, so the redrive worker gets them back in the
 * order they were accepted.
 */
export class Spillover {
  constructor(private readonly opts: SpilloverOptions) {}

  async spill(liteTopic: string, body: string): Promise<{ messageId: string }> {
    this.opts.onSpill?.(liteTopic, body);
    const res = await this.opts.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MessageBody: body,
        MessageGroupId: liteTopic,
        // Content plus LiteTopic: an edge retrying the same spill within SQS's 5-minute
        // window does not enqueue it twice.
        MessageDeduplicationId: createHash('sha256').update(liteTopic).update('\0').update(body).digest('hex'),
        MessageAttributes: { liteTopic: { DataType: 'String', StringValue: liteTopic } },
      }),
    );
    return { messageId: `${SPILLED_PREFIX}${res.MessageId ?? ''}` };
  }
}

export interface SpillingOptions {
  readonly clock: Clock;
  /**
   * After an outage answer, sends go straight to the spillover for this long before
   * the broker is tried again, so each request does not wait out a dead connection.
   */
  readonly probeAfterMs?: number;
  readonly onSpill?: (liteTopic: string, cause: QueueUnavailableError) => void;
}

/**
 * A LiteQueue whose sends fall back to the spillover queue when the primary engine
 * is unavailable (QueueUnavailableError), so an accepted request is never lost and
 * the client still gets its normal answer. Quota refusals and bad requests are not
 * spilled: they are answers, not outages. If the spill fails too, the send fails and
 * the edge answers 503.
 */
export class SpillingLiteQueue implements LiteQueue {
  private skipPrimaryUntil = 0;
  private lastOutage: QueueUnavailableError | undefined;

  constructor(
    private readonly primary: LiteQueue,
    private readonly spillover: Spillover,
    private readonly opts: SpillingOptions,
  ) {}

  async send(liteTopic: string, body: string): Promise<{ messageId: string }> {
    if (this.opts.clock.now() < this.skipPrimaryUntil && this.lastOutage)
      return this.spill(liteTopic, body, this.lastOutage);
    try {
      return await this.primary.send(liteTopic, body);
    } catch (err) {
      if (!(err instanceof QueueUnavailableError)) throw err;
      this.lastOutage = err;
      this.skipPrimaryUntil = this.opts.clock.now() + (this.opts.probeAfterMs ?? 2_000);
      return this.spill(liteTopic, body, err);
    }
  }

  private async spill(liteTopic: string, body: string, cause: QueueUnavailableError): Promise<{ messageId: string }> {
    this.opts.onSpill?.(liteTopic, cause);
    try {
      return await this.spillover.spill(liteTopic, body);
    } catch (spillErr) {
      throw new QueueUnavailableError(`broker and spillover both unavailable for ${liteTopic}`, {
        cause: new AggregateError([cause, spillErr]),
      });
    }
  }

  subscribe(handler: MessageHandler, options: SubscribeOptions): Subscription {
    return this.primary.subscribe(handler, options);
  }

  close(): Promise<void> {
    return this.primary.close();
  }
}
