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
      const received = await this.receive(0);
      if (received.length === 0) return moved;
      const batch = await this.settleHopeless(received, false);
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
    // An envelope already past its deadline is answered here, not sent: in the broker it
    // would only wait behind the backlog an outage leaves for a dispatcher to expire it,
    // and the spillover drains one envelope per broker round trip meanwhile.
    let pending = await this.settleHopeless(batch, false);
    for (let refusals = 1; pending.length > 0; refusals++) {
      const { rest } = await this.sendInOrder(pending);
      if (rest.length === 0) return;
      pending = await this.settleHopeless(rest, true);
      if (pending.length === 0) return;
      // Retried no later than the first held deadline, so that envelope is answered on time
      // (one whose answer just failed waits the backoff: no tight loop while the store is down).
      const first = this.untilFirstDeadline(pending);
      const wait = first > 0 ? Math.min(this.backoff(refusals), first) : this.backoff(refusals);
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

  private deadlineOf(m: Message): number | undefined {
    return (this.opts.deadlineOf ?? envelopeDeadline)(m.Body ?? '');
  }

  /** Milliseconds until the earliest deadline among `messages` (Infinity when none has one). */
  private untilFirstDeadline(messages: Message[]): number {
    const now = this.opts.clock.now();
    let first = Infinity;
    for (const m of messages) first = Math.min(first, this.deadlineOf(m) ?? Infinity);
    return first - now;
  }

  /**
   * Answers messages past their deadline and, once the broker refused (`refused`), those at
   * the receive limit; returns the ones still worth sending, in their order. The answers
   * run at once: they do not go through the broker, so their order does not matter.
   */
  private async settleHopeless(messages: Message[], refused: boolean): Promise<Message[]> {
    if (!this.opts.onUndeliverable) return messages;
    const answer = this.opts.onUndeliverable;
    const now = this.opts.clock.now();
    const maxReceives = this.opts.maxReceiveCount ?? 5;
    const settled = await Promise.all(
      messages.map(async (m) => {
        const body = m.Body ?? '';
        const deadline = this.deadlineOf(m);
        const receives = Number(m.Attributes?.ApproximateReceiveCount ?? '1');
        const reason =
          deadline !== undefined && deadline <= now
            ? 'the broker was unavailable until the request deadline (held in the SQS spillover)'
            : refused && receives >= maxReceives
              ? `the broker was unavailable and the spillover receive limit (${maxReceives}) was reached`
              : undefined;
        if (!reason) return false;
        const liteTopic = m.MessageAttributes?.liteTopic?.StringValue ?? '';
        try {
          const message = { messageId: m.MessageId ?? '', liteTopic, body, attempt: receives };
          await answer({ message, reason, httpStatus: 503 });
        } catch (err) {
          this.opts.onError?.(err);
          return false;
        }
        this.stats.undeliverable++;
        // Answered, so never sent; if the delete fails it comes back and is answered again,
        // which the settlement's one-answer record absorbs.
        await this.delete(m).catch((err: unknown) => this.opts.onError?.(err));
        return true;
      }),
    );
    return messages.filter((_, i) => !settled[i]);
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
    await this.opts.sqs.send(
      new DeleteMessageCommand({ QueueUrl: this.opts.queueUrl, ReceiptHandle: m.ReceiptHandle! }),
    );
  }

  /** Keeps messages hidden for `ms` plus a margin (0: visible again now). */
  private async hold(messages: Message[], ms: number): Promise<void> {
    const seconds = ms === 0 ? 0 : Math.ceil((ms + VISIBILITY_MARGIN_MS) / 1000);
    for (const m of messages) {
      await this.opts.sqs
        .send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: this.opts.queueUrl,
            ReceiptHandle: m.ReceiptHandle!,
            VisibilityTimeout: seconds,
          }),
        )
        .catch((err: unknown) => this.opts.onError?.(err));
    }
  }
}
