/**
 * The embedded LiteTopic engine: the broker's LiteTopic semantics in one process.
 *
 * - LiteTopics are created on first send and reclaimed after `idleTtlMs` empty.
 * - A ready set holds the LiteTopics that have a deliverable message, so finding
 *   work costs O(ready), not O(all LiteTopics); a million idle ones cost memory only.
 * - Workers take turns over ready LiteTopics (round robin), so tenants are fair.
 * - Suspend(ms) puts the message back at the head and parks its LiteTopic on a
 *   timer: no worker is held while it waits.
 * - Failure puts it back with an exponential backoff (the LiteTopic waits, FIFO as
 *   on the broker) until `maxAttempts`, then dead-letters it.
 * - A handler that does not return within `invisibleTimeoutMs` (default MAX_IN_HAND_MS,
 *   as long as the RocketMQ adapter keeps a received message invisible) has its message
 *   delivered again; its late answer is ignored.
 */
import type { Clock } from '../clock/clock.js';
import { Deque } from './deque.js';
import { MAX_IN_HAND_MS } from './in-hand.js';
import type {
  ConsumeResult,
  DeadLetter,
  LiteMessage,
  LiteQueue,
  MessageHandler,
  SubscribeOptions,
  Subscription,
} from './types.js';

export interface EmbeddedQueueOptions {
  readonly clock: Clock;
  /** Deliveries before a failing message is dead-lettered. */
  readonly maxAttempts?: number;
  /** Delay before redelivery after the n-th failure. */
  readonly retryBackoffMs?: (attempt: number) => number;
  readonly invisibleTimeoutMs?: number;
  readonly idleTtlMs?: number;
  /**
   * Messages of one LiteTopic in flight at once. 1 keeps strict order (the broker's
   * FIFO lite pop); more is the broker's concurrent mode, where a busy LiteTopic
   * can occupy several workers.
   */
  readonly maxInFlightPerTopic?: number;
  readonly onDeadLetter?: (deadLetter: DeadLetter) => void;
}

export interface EmbeddedQueueStats {
  readonly liteTopics: number;
  readonly ready: number;
  readonly queued: number;
  readonly inFlight: number;
  readonly suspended: number;
  readonly deadLettered: number;
  readonly delivered: number;
}

interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  attempt: number;
}

interface Topic {
  readonly name: string;
  readonly messages: Deque<StoredMessage>;
  inFlight: number;
  /** Pending resume timer while suspended or backing off. */
  cancelResume: (() => void) | undefined;
  inReady: boolean;
}

const defaultBackoff = (attempt: number) => Math.min(60_000, 1_000 * 2 ** (attempt - 1));

export class EmbeddedLiteQueue implements LiteQueue {
  private readonly clock: Clock;
  private readonly maxAttempts: number;
  private readonly backoff: (attempt: number) => number;
  private readonly invisibleTimeoutMs: number;
  private readonly idleTtlMs: number;
  private readonly maxInFlightPerTopic: number;
  private readonly onDeadLetter: ((d: DeadLetter) => void) | undefined;

  private readonly topics = new Map<string, Topic>();
  /** Empty LiteTopics in the order they became empty: the oldest are reclaimed first. */
  private readonly idleSince = new Map<string, number>();
  private readonly ready = new Deque<Topic>();
  private readonly dead: DeadLetter[] = [];
  private sequence = 0;
  private queued = 0;
  private delivered = 0;
  private suspendedCount = 0;

  private handler: MessageHandler | undefined;
  private concurrency = 0;
  private busyWorkers = 0;
  private pumpScheduled = false;
  private readonly running = new Set<Promise<void>>();

  constructor(options: EmbeddedQueueOptions) {
    this.clock = options.clock;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.backoff = options.retryBackoffMs ?? defaultBackoff;
    this.invisibleTimeoutMs = options.invisibleTimeoutMs ?? MAX_IN_HAND_MS;
    this.idleTtlMs = options.idleTtlMs ?? 15 * 60_000;
    this.maxInFlightPerTopic = options.maxInFlightPerTopic ?? 1;
    this.onDeadLetter = options.onDeadLetter;
  }

  async send(liteTopic: string, body: string): Promise<{ messageId: string }> {
    this.reclaimIdle();
    let topic = this.topics.get(liteTopic);
    if (!topic) {
      topic = { name: liteTopic, messages: new Deque(), inFlight: 0, cancelResume: undefined, inReady: false };
      this.topics.set(liteTopic, topic);
    }
    this.idleSince.delete(liteTopic);
    const messageId = `m${(++this.sequence).toString(36)}`;
    topic.messages.push({ messageId, body, attempt: 1 });
    this.queued++;
    this.makeReadyIfDeliverable(topic);
    return { messageId };
  }

  subscribe(handler: MessageHandler, options: SubscribeOptions): Subscription {
    if (this.handler)
      throw new Error('the embedded engine serves one consumer group; close the other subscription first');
    if (!(options.concurrency >= 1)) throw new Error('concurrency must be at least 1');
    this.handler = handler;
    this.concurrency = options.concurrency;
    this.schedulePump();
    return {
      close: async () => {
        if (this.handler !== handler) return;
        this.handler = undefined;
        await Promise.all([...this.running]);
      },
    };
  }

  async close(): Promise<void> {
    this.handler = undefined;
    await Promise.all([...this.running]);
    for (const topic of this.topics.values()) topic.cancelResume?.();
  }

  deadLetters(): readonly DeadLetter[] {
    return this.dead;
  }

  stats(): EmbeddedQueueStats {
    let inFlight = 0;
    for (const t of this.topics.values()) inFlight += t.inFlight;
    return {
      liteTopics: this.topics.size,
      ready: this.ready.length,
      queued: this.queued,
      inFlight,
      suspended: this.suspendedCount,
      deadLettered: this.dead.length,
      delivered: this.delivered,
    };
  }

  /** Messages waiting in one LiteTopic (not counting those in flight). */
  depth(liteTopic: string): number {
    return this.topics.get(liteTopic)?.messages.length ?? 0;
  }

  /** Drops LiteTopics that have stayed empty for the idle TTL. Cost follows what it reclaims. */
  reclaimIdle(): number {
    const cutoff = this.clock.now() - this.idleTtlMs;
    let reclaimed = 0;
    for (const [name, since] of this.idleSince) {
      if (since > cutoff) break;
      this.idleSince.delete(name);
      this.topics.delete(name);
      reclaimed++;
    }
    return reclaimed;
  }

  private deliverable(topic: Topic): boolean {
    return topic.messages.length > 0 && topic.cancelResume === undefined && topic.inFlight < this.maxInFlightPerTopic;
  }

  private makeReadyIfDeliverable(topic: Topic): void {
    if (!topic.inReady && this.deliverable(topic)) {
      topic.inReady = true;
      this.ready.push(topic);
      this.schedulePump();
    }
  }

  private markIdleIfEmpty(topic: Topic): void {
    if (topic.messages.length === 0 && topic.inFlight === 0 && topic.cancelResume === undefined) {
      this.idleSince.set(topic.name, this.clock.now());
    }
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.handler && this.busyWorkers < this.concurrency) {
      const topic = this.ready.shift();
      if (!topic) return;
      topic.inReady = false;
      if (!this.deliverable(topic)) continue;
      const message = topic.messages.shift()!;
      this.queued--;
      topic.inFlight++;
      // Round robin: a LiteTopic with more to give goes to the back of the line.
      this.makeReadyIfDeliverable(topic);
      this.deliver(topic, message, this.handler);
    }
  }

  private deliver(topic: Topic, message: StoredMessage, handler: MessageHandler): void {
    this.busyWorkers++;
    this.delivered++;
    let settled = false;
    const view: LiteMessage = {
      messageId: message.messageId,
      liteTopic: topic.name,
      body: message.body,
      attempt: message.attempt,
    };
    const cancelInvisible = this.clock.setTimer(this.invisibleTimeoutMs, () => {
      if (settled) return;
      settled = true;
      this.settle(topic, message, {
        kind: 'failure',
        reason: `handler did not return within ${this.invisibleTimeoutMs} ms`,
      });
    });
    let holdsWorker = true;
    const release = () => {
      if (!holdsWorker) return;
      holdsWorker = false;
      this.busyWorkers--;
      this.schedulePump();
    };
    const run = (async () => {
      let result: ConsumeResult;
      try {
        result = await handler(view, { release });
      } catch (error) {
        result = { kind: 'failure', reason: error instanceof Error ? error.message : String(error) };
      }
      cancelInvisible();
      if (!settled) {
        settled = true;
        this.settle(topic, message, result);
      }
    })().finally(() => {
      this.running.delete(run);
      release();
      this.schedulePump();
    });
    this.running.add(run);
  }

  private settle(topic: Topic, message: StoredMessage, result: ConsumeResult): void {
    topic.inFlight--;
    switch (result.kind) {
      case 'success':
        break;
      case 'suspend': {
        this.putBack(topic, message, result.ms);
        const pause = topic.cancelResume;
        result.onRecallable?.(async () => {
          // Only this Suspend's own pause, with its message still first: a later one is the later Suspend's.
          if (topic.cancelResume !== pause || topic.messages.peek() !== message) return false;
          this.resume(topic);
          return true;
        });
        break;
      }
      case 'failure':
        if (message.attempt >= this.maxAttempts) {
          const deadLetter: DeadLetter = {
            message: {
              messageId: message.messageId,
              liteTopic: topic.name,
              body: message.body,
              attempt: message.attempt,
            },
            reason: result.reason ?? 'handler failed',
          };
          this.dead.push(deadLetter);
          this.onDeadLetter?.(deadLetter);
        } else {
          this.putBack(topic, message, this.backoff(message.attempt));
          message.attempt++;
        }
        break;
    }
    this.makeReadyIfDeliverable(topic);
    this.markIdleIfEmpty(topic);
  }

  /** Back to the head of its LiteTopic, which pauses for `ms`. */
  private putBack(topic: Topic, message: StoredMessage, ms: number): void {
    topic.messages.unshift(message);
    this.queued++;
    topic.cancelResume?.();
    if (topic.cancelResume === undefined) this.suspendedCount++;
    topic.cancelResume = this.clock.setTimer(ms, () => this.resume(topic, true));
  }

  private resume(topic: Topic, fired = false): void {
    if (topic.cancelResume === undefined) return;
    if (!fired) topic.cancelResume();
    topic.cancelResume = undefined;
    this.suspendedCount--;
    this.makeReadyIfDeliverable(topic);
  }
}
