import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sleep, type Clock } from '../../clock/clock.js';
import type { LiteQueue } from '../types.js';

export interface RedriveOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** Where envelopes go back to: the broker-backed queue, not the spilling wrapper. */
  readonly target: LiteQueue;
  readonly clock: Clock;
  /** Pause after the target refused, before trying again. */
  readonly backoffMs?: number;
  /** Long-poll wait when the queue is empty (SQS maximum 20). */
  readonly waitSeconds?: number;
  readonly onRedriven?: (liteTopic: string, body: string) => void;
  readonly onError?: (err: unknown) => void;
}

export interface RedriveStats {
  redriven: number;
  failedAttempts: number;
}

/**
 * Moves spilled envelopes back into the broker once it takes them again. FIFO
 * receive hands out at most the head of each LiteTopic's group per batch position,
 * and a group stays locked while its message is in flight, so each LiteTopic is
 * redriven in order. On the first refusal the rest of the batch is made visible
 * again at once (their order preserved by the FIFO group lock) and the worker backs off.
 */
export class RedriveWorker {
  readonly stats: RedriveStats = { redriven: 0, failedAttempts: 0 };
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly opts: RedriveOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** One pass over what is visible now; resolves with how many envelopes moved. */
  async drainOnce(): Promise<number> {
    let moved = 0;
    for (;;) {
      const batch = await this.receive(0);
      if (batch.length === 0) return moved;
      const { done, ok } = await this.redriveBatch(batch);
      moved += done;
      if (!ok) return moved;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const batch = await this.receive(this.opts.waitSeconds ?? 5);
        if (batch.length === 0) continue;
        const { ok } = await this.redriveBatch(batch);
        if (!ok) await sleep(this.opts.clock, this.opts.backoffMs ?? 2_000, this.abort.signal).catch(() => undefined);
      } catch (err) {
        if (this.stopped) return;
        this.opts.onError?.(err);
        await sleep(this.opts.clock, this.opts.backoffMs ?? 2_000, this.abort.signal).catch(() => undefined);
      }
    }
  }

  private async receive(waitSeconds: number): Promise<Message[]> {
    const res = await this.opts.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: 30,
        MessageAttributeNames: ['liteTopic'],
      }),
      { abortSignal: this.abort.signal },
    );
    return res.Messages ?? [];
  }

  private async redriveBatch(batch: Message[]): Promise<{ done: number; ok: boolean }> {
    let done = 0;
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i]!;
      const liteTopic = m.MessageAttributes?.liteTopic?.StringValue ?? '';
      try {
        await this.opts.target.send(liteTopic, m.Body ?? '');
      } catch (err) {
        this.stats.failedAttempts++;
        this.opts.onError?.(err);
        await this.release(batch.slice(i));
        return { done, ok: false };
      }
      // Deleted only after the broker took it: a crash in between re-sends it
      // (a duplicate), never drops it.
      await this.opts.sqs.send(new DeleteMessageCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle! }));
      this.stats.redriven++;
      done++;
      this.opts.onRedriven?.(liteTopic, m.Body ?? '');
    }
    return { done, ok: true };
  }

  private async release(messages: Message[]): Promise<void> {
    for (const m of messages) {
      await this.opts.sqs
        .send(new ChangeMessageVisibilityCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }))
        .catch(() => undefined);
    }
  }
}
