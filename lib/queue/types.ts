/**
 * The LiteQueue contract: one parent topic holding many LiteTopics (one per
 * tier + tenant + account + model), created on first send and reclaimed when idle. Two
 * engines implement it: the embedded engine (lib/queue/embedded.ts) and the
 * RocketMQ 5.5 adapter. Both pass test/lib/queue/conformance.ts.
 */

/** What a handler tells the engine about one delivered message. */
export type ConsumeResult =
  | { readonly kind: 'success' }
  /** Redeliver later (with backoff) up to the attempt limit, then dead-letter. */
  | { readonly kind: 'failure'; readonly reason?: string }
  /** Put the message back at the head of its LiteTopic and pause that LiteTopic for `ms`. */
  | {
      readonly kind: 'suspend';
      readonly ms: number;
      /**
       * Told, once the pause is in place, how to end it early. A dispatcher sends a request
       * back from a full room for as long as it expects the room to stay full; when the room
       * empties first, the slots would idle until the pause ran out (the tail of a flood,
       * `npm run bench -- replay`). Never called by an engine that cannot.
       */
      readonly onRecallable?: (recall: Recall) => void;
    };

/**
 * Ends a Suspend early: the message's LiteTopic resumes now, the message first. Resolves
 * false when there was nothing to end (the pause was over, replaced by a later one, or the
 * broker refused); harmless then.
 */
export type Recall = () => Promise<boolean>;

export const Consume = {
  success: { kind: 'success' } as ConsumeResult,
  failure: (reason?: string): ConsumeResult => ({ kind: 'failure', reason }),
  suspend: (ms: number, onRecallable?: (recall: Recall) => void): ConsumeResult =>
    onRecallable ? { kind: 'suspend', ms, onRecallable } : { kind: 'suspend', ms },
};

export interface LiteMessage {
  /** Engine-assigned id, stable across redeliveries. */
  readonly messageId: string;
  readonly liteTopic: string;
  readonly body: string;
  /** 1 on first delivery; grows on each failure redelivery (not on Suspend). */
  readonly attempt: number;
}

/** The place a delivery holds among the subscription's `concurrency`. */
export interface Worker {
  /**
   * Gives the place to the next delivery while this handler goes on: its message stays
   * un-acked (redelivered if the process dies) and `close()` still waits for it, but it no
   * longer counts against `concurrency`. For work bounded elsewhere: a dispatcher's GPU
   * call holds a slot of the shared gate, and a deployment's slots may outnumber its
   * workers; held, the calls would leave no worker to take the next request to the
   * scheduler. Idempotent.
   */
  release(): void;
}

/** Every engine passes `worker`; a handler called directly (tests) may go without. */
export type MessageHandler = (message: LiteMessage, worker?: Worker) => Promise<ConsumeResult>;

export interface DeadLetter {
  readonly message: LiteMessage;
  readonly reason: string;
  /**
   * Set when the request was never served for a reason outside the dispatcher (the
   * broker unavailable until its deadline): the client is answered with this status
   * and the reason as it is. Unset: the handler failed on every attempt.
   */
  readonly httpStatus?: number;
}

export interface SubscribeOptions {
  /** Most handler calls running at once across all LiteTopics, not counting those that released their worker. */
  readonly concurrency: number;
}

export interface Subscription {
  /** Stops taking new messages and waits for running handlers to return. */
  close(): Promise<void>;
}

export interface LiteQueue {
  /** Appends to a LiteTopic, creating it when it does not exist. */
  send(liteTopic: string, body: string): Promise<{ messageId: string }>;
  /** Starts consuming every LiteTopic of the parent topic, including ones created later. */
  subscribe(handler: MessageHandler, options: SubscribeOptions): Subscription;
  /** Drains and releases the engine's resources. */
  close(): Promise<void>;
}

/** Raised when the broker refuses a new LiteTopic because its quota is used up. */
export class LiteTopicQuotaError extends Error {
  constructor(
    readonly liteTopic: string,
    message = `LiteTopic quota exceeded creating ${liteTopic}`,
  ) {
    super(message);
    this.name = 'LiteTopicQuotaError';
  }
}

/** Raised when the queue cannot take a message right now (broker down, timeout). */
export class QueueUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QueueUnavailableError';
  }
}
