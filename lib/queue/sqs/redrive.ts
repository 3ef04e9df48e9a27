import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sleep, type Clock } from '../../clock/clock.js';
import type { DeadLetter, LiteQueue } from '../types.js';

export interface RedriveOptions {
  readonly sqs: SQSClient;
  readonly queueUrl: string;
  /** Where envelopes go back to: the broker-backed queue, not the spilling wrapper. */
  readonly target: LiteQueue;
  readonly clock: Clock;
  /** Pause after the n-th refusal in a row before trying the held batch again (default 1, 2, 4 ... 10 s). */
  readonly backoffMs?: (refusals: number) => number;
  /** Long-poll wait when the queue is empty (SQS maximum 20). */
  readonly waitSeconds?: number;
  /**
   * The queue's redrive policy: SQS dead-letters a message on its receive after this
   * many. One that reached it is answered here first, so nothing reaches the
   * dead-letter queue unanswered or without its reason.
   */
  readonly maxReceiveCount?: number;
  /** When a spilled envelope stops being worth sending (ms since epoch); default: its `deadline` field. */
  readonly deadlineOf?: (body: string) => number | undefined;
  /**
   * Answers the client of an envelope that will not reach the broker in time, gives
   * its place back and files it with the reason (the dispatcher's settlement). The
   * message leaves the spillover only after this resolves.
   */
  readonly onUndeliverable?: (deadLetter: DeadLetter) => Promise<void>;
  readonly onRedriven?: (liteTopic: string, body: string) => void;
  readonly onError?: (err: unknown) => void;
}

export interface RedriveStats {
  redriven: number;
  failedAttempts: number;
  /** Answered here: deadline passed or receive limit reached while the broker was away. */
  undeliverable: number;
}

const defaultBackoff = (refusals: number) => Math.min(10_000, 1_000 * 2 ** (refusals - 1));
/** Visibility beyond the backoff, so a held message stays hidden until its retry. */
const VISIBILITY_MARGIN_MS = 5_000;

function envelopeDeadline(body: string): number | undefined {
  try {
    const deadline = (JSON.parse(body) as { deadline?: unknown } | null)?.deadline;
    return typeof deadline === 'number' ? deadline : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Moves spilled envelopes back into the broker once it takes them again. FIFO
 * receive hands out at most the head of each LiteTopic's group per batch position,
 * and a group stays locked while its message is in flight, so each LiteTopic is
 * redriven in order.
 *
 * While the broker refuses, the worker holds the batch it has and retries it with
 * backoff, keeping it hidden with ChangeMessageVisibility instead of giving it back:
 * a receive is what SQS counts toward its dead-letter limit, so an outage of any
 * length costs a message one receive. A held envelope whose deadline passes is
 * answered (onUndeliverable) and deleted.
 */
export class RedriveWorker {
  readonly stats: RedriveStats = { redriven: 0, failedAttempts: 0, undeliverable: 0 };
  private stopped = false;
  private loop: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(private readonly opts: RedriveOptions) {}

  start(): void {
    this.loop ??= this.run();
  }

  /** One pass over what is visible now; resolves with how many envelopes moved. A refusal hides the rest for the first backoff. */
  async drainOnce(): Promise<number> {
    let moved = 0;
    for (;;) {
      const batch = await this.receive(0);
      if (batch.length === 0) return moved;
      const { done, rest } = await this.sendInOrder(batch);
      moved += done;
      if (rest.length > 0) {
        await this.hold(rest, this.backoff(1));
        return moved;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.loop?.catch(() => undefined);
  }

  private backoff(refusals: number): number {
    return (this.opts.backoffMs ?? defaultBackoff)(refusals);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        const batch = await this.receive(this.opts.waitSeconds ?? 5);
        if (batch.length > 0) await this.redrive(batch);
      } catch (err) {
        if (this.stopped) return;
        this.opts.onError?.(err);
        await sleep(this.opts.clock, this.backoff(1), this.abort.signal).catch(() => undefined);
      }
    }
  }

  /** Sends the batch, holding what the broker refuses until it takes it or it is answered. */
  private async redrive(batch: Message[]): Promise<void> {
    let pending = batch;
    for (let refusals = 1; ; refusals++) {
      const { rest } = await this.sendInOrder(pending);
      if (rest.length === 0) return;
      pending = await this.settleHopeless(rest);
      if (pending.length === 0) return;
      const wait = this.backoff(refusals);
      await this.hold(pending, wait);
      await sleep(this.opts.clock, wait, this.abort.signal).catch(() => undefined);
      if (this.stopped) {
        // Another dispatcher's worker picks them up at once.
        await this.hold(pending, 0);
        return;
      }
    }
  }

  /** Sends in order until the first refusal; returns how many moved and what is left. */
  private async sendInOrder(batch: Message[]): Promise<{ done: number; rest: Message[] }> {
    let done = 0;
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i]!;
      const liteTopic = m.MessageAttributes?.liteTopic?.StringValue ?? '';
      try {
        await this.opts.target.send(liteTopic, m.Body ?? '');
      } catch (err) {
        this.stats.failedAttempts++;
        this.opts.onError?.(err);
        return { done, rest: batch.slice(i) };
      }
      // Deleted only after the broker took it: a crash in between re-sends it
      // (a duplicate, which the dispatcher answers once), never drops it.
      await this.delete(m);
      this.stats.redriven++;
      done++;
      this.opts.onRedriven?.(liteTopic, m.Body ?? '');
    }
    return { done, rest: [] };
  }

  /** Answers held messages past their deadline or at the receive limit; returns the ones still worth holding. */
  private async settleHopeless(messages: Message[]): Promise<Message[]> {
    const keep: Message[] = [];
    const now = this.opts.clock.now();
    const maxReceives = this.opts.maxReceiveCount ?? 5;
    for (const m of messages) {
      const body = m.Body ?? '';
      const deadline = (this.opts.deadlineOf ?? envelopeDeadline)(body);
      const receives = Number(m.Attributes?.ApproximateReceiveCount ?? '1');
      const reason =
        deadline !== undefined && deadline <= now
          ? 'the broker was unavailable until the request deadline (held in the SQS spillover)'
          : receives >= maxReceives
            ? `the broker was unavailable and the spillover receive limit (${maxReceives}) was reached`
            : undefined;
      if (!reason || !this.opts.onUndeliverable) {
        keep.push(m);
        continue;
      }
      const liteTopic = m.MessageAttributes?.liteTopic?.StringValue ?? '';
      try {
        const message = { messageId: m.MessageId ?? '', liteTopic, body, attempt: receives };
        await this.opts.onUndeliverable({ message, reason, httpStatus: 503 });
      } catch (err) {
        this.opts.onError?.(err);
        keep.push(m);
        continue;
      }
      await this.delete(m);
      this.stats.undeliverable++;
    }
    return keep;
  }

  private async receive(waitSeconds: number): Promise<Message[]> {
    const res = await this.opts.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: this.opts.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: waitSeconds,
        VisibilityTimeout: 30,
        MessageAttributeNames: ['liteTopic'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
      { abortSignal: this.abort.signal },
    );
    return res.Messages ?? [];
  }

  private async delete(m: Message): Promise<void> {
    await this.opts.sqs.send(new DeleteMessageCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle! }));
  }

  /** Keeps messages hidden for `ms` plus a margin (0: visible again now). */
  private async hold(messages: Message[], ms: number): Promise<void> {
    const seconds = ms === 0 ? 0 : Math.ceil((ms + VISIBILITY_MARGIN_MS) / 1000);
    for (const m of messages) {
      await this.opts.sqs
        .send(
          new ChangeMessageVisibilityCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: seconds }),
        )
        .catch((err: unknown) => this.opts.onError?.(err));
    }
  }
}
