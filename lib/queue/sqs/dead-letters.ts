import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { DeadLetter, LiteQueue } from '../types.js';

export interface DeadLetterRecord {
  /** SQS id of the dead-letter record itself. */
  readonly id: string;
  readonly liteTopic: string;
  readonly body: string;
  readonly reason: string;
  readonly attempt: number;
  /** Id the queue engine had given the message, if it got that far. */
  readonly messageId: string;
}

export interface DeadLetterQueueOptions {
  readonly sqs: SQSClient;
  /** A standard queue: dead letters have no order to keep. */
  readonly queueUrl: string;
}

/**
 * Envelopes that failed for good or expired, each with its reason, in SQS. The
 * operator lists them and redrives the ones worth another try.
 */
export class SqsDeadLetterQueue {
  constructor(private readonly opts: DeadLetterQueueOptions) {}

  /** Fits `onDeadLetter` of the queue engines. */
  readonly put = async (deadLetter: DeadLetter): Promise<void> => {
    const { message, reason } = deadLetter;
    await this.opts.sqs.send(
      new SendMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MessageBody: message.body,
        MessageAttributes: {
          liteTopic: { DataType: 'String', StringValue: message.liteTopic },
          reason: { DataType: 'String', StringValue: reason || 'unknown' },
          attempt: { DataType: 'Number', StringValue: String(message.attempt) },
          messageId: { DataType: 'String', StringValue: message.messageId || 'none' },
        },
      }),
    );
  };

  /**
   * Up to `max` dead letters, left in place (visibility 0). SQS sampling may miss
   * some on one call on a large queue; listing is for looking, not for counting.
   */
  async list(max = 100): Promise<DeadLetterRecord[]> {
    const seen = new Map<string, DeadLetterRecord>();
    for (let round = 0; round < Math.ceil(max / 10) + 2 && seen.size < max; round++) {
      const batch = await this.receive(0, Math.min(10, max - seen.size));
      if (batch.length === 0) break;
      let fresh = 0;
      for (const m of batch) {
        if (!seen.has(m.MessageId!)) fresh++;
        seen.set(m.MessageId!, toRecord(m));
      }
      if (fresh === 0) break;
    }
    return [...seen.values()].slice(0, max);
  }

  /**
   * Sends dead letters (all, or those `select` picks) back into `target` and deletes
   * each one after the target took it. Returns how many moved.
   */
  async redrive(
    target: LiteQueue,
    select: (record: DeadLetterRecord) => boolean = () => true,
    /** What to send instead of the stored body (e.g. an envelope with a fresh deadline). */
    rewrite: (record: DeadLetterRecord) => string = (record) => record.body,
  ): Promise<number> {
    let moved = 0;
    // Records passed over stay hidden while the walk goes on (so it moves forward),
    // then are shown again at once: the operator must still see them.
    const passedOver: Message[] = [];
    try {
      for (;;) {
        const batch = await this.receive(30, 10);
        if (batch.length === 0) return moved;
        let touched = 0;
        for (const m of batch) {
          const record = toRecord(m);
          if (!select(record)) {
            passedOver.push(m);
            continue;
          }
          touched++;
          await target.send(record.liteTopic, rewrite(record));
          await this.opts.sqs.send(
            new DeleteMessageCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle! }),
          );
          moved++;
        }
        if (touched === 0) return moved;
      }
    } finally {
      for (const m of passedOver) {
        await this.opts.sqs
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: this.opts.queueUrl,
              ReceiptHandle: m.ReceiptHandle!,
              VisibilityTimeout: 0,
            }),
          )
          .catch(() => undefined);
      }
    }
  }

  private async receive(visibilityTimeout: number, max: number): Promise<Message[]> {
    const res = await this.opts.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: 0,
        VisibilityTimeout: visibilityTimeout,
        MessageAttributeNames: ['All'],
      }),
    );
    return res.Messages ?? [];
  }
}

function toRecord(m: Message): DeadLetterRecord {
  const attr = (name: string) => m.MessageAttributes?.[name]?.StringValue ?? '';
  return {
    id: m.MessageId ?? '',
    liteTopic: attr('liteTopic'),
    body: m.Body ?? '',
    reason: attr('reason'),
    attempt: Number(attr('attempt') || 0),
    messageId: attr('messageId'),
  };
}
