import {
  ConsumeResult as RmqResult,
  ConsumeResultSuspend,
  LitePushConsumerBuilder,
  Producer,
  type LitePushConsumer,
  type MessageView,
} from 'rocketmq-client-nodejs';
import { withTimeout, type Clock } from '../../clock/clock.js';
import {
  QueueUnavailableError,
  type ConsumeResult,
  type DeadLetter,
  type LiteMessage,
  type LiteQueue,
  type MessageHandler,
  type SubscribeOptions,
  type Subscription,
} from '../types.js';
import { silentLogger, type Logger } from '../../telemetry/log.js';
import { rocketmqClientLogger } from './client-logger.js';
import { mapSendError } from './errors.js';
import { FailureCounts } from './failure-counts.js';
import { Limiter } from './limiter.js';
import {
  defaultReceiveWatchdog,
  observeReceives,
  ReceiveWatchdog,
  type ReceiveWatchdogOptions,
} from './receive-watchdog.js';
import { keepLiteSubscription, type LiteSubscriptionKeeper } from './lite-subscription.js';
import { retryRefusedSettles } from './settle-retry.js';
import { endRenewalsOnSettle, InHandRenewal, invisibleRenewer } from './renew.js';
import { observeSuspends, PendingRecalls } from './recall.js';
import { NUDGE_TAG, StallNudger } from './nudge.js';
import type { ReceiveProbe } from './receive-probe.js';
import { DEFAULT_RECEIVERS } from './receivers.js';
import { SettledIds } from './settled.js';

export interface RocketMQLiteQueueOptions {
  /** Proxy gRPC `host:port` (the port is required; the client would default to 80). */
  readonly endpoints: string;
  /** LITE parent topic (`message.type=LITE`). */
  readonly parentTopic: string;
  /**
   * Wildcard group bound to the parent (`lite.bind.topic`, `lite.sub.wildcard`). Either
   * kind works: an orderly group (FIFO per LiteTopic: one message of a LiteTopic in
   * flight) or a non-orderly one (one received batch of a LiteTopic, up to 32, handled
   * concurrently; see scripts/rocketmq/README.md for what Suspend does there).
   */
  readonly consumerGroup: string;
  readonly clock: Clock;
  /** Deliveries before a failing message is dead-lettered (counted here, not by the broker). */
  readonly maxAttempts?: number;
  /**
   * Pause after the n-th failure, as a Suspend. The broker pauses the whole LiteTopic
   * (in a non-orderly group too) and delivers the message again first.
   */
  readonly retryBackoffMs?: (failures: number) => number;
  /**
   * Where a message goes after its last failed attempt, with the reason (the SQS
   * dead-letter queue in production). The message is acked only after this resolves;
   * if it throws, the message is tried again later.
   */
  readonly onDeadLetter: (deadLetter: DeadLetter) => void | Promise<void>;
  /** A send that has not answered by then is reported unavailable (it may still land). */
  readonly sendTimeoutMs?: number;
  readonly namespace?: string;
  /** TLS to the proxy (a public endpoint) and ACL 2.0 credentials, when the cluster requires them. */
  readonly access?: {
    readonly sslEnabled: boolean;
    readonly credentials?: { readonly accessKey: string; readonly accessSecret: string };
  };
  /** Where the client library's own log lines go, and the watchdog's (default: nowhere). */
  readonly log?: Logger;
  /** When a consumer that keeps failing to receive is replaced by a new one (`receive-watchdog.ts`). */
  readonly receiveWatchdog?: ReceiveWatchdogOptions;
  /** Told of every receive and of each message's arrival and settling (receive-probe.ts). */
  readonly probe?: ReceiveProbe;
  /**
   * A LiteTopic silent this long after a message of it was settled here (plus its
   * pause) gets one empty nudge message, so a broker that dropped its wake-up event
   * delivers the rest (nudge.ts; apache/rocketmq#11191). 0 turns nudging off. Default 500.
   */
  readonly nudgeAfterMs?: number;
  /**
   * LitePushConsumers per subscription, each with its own long poll, sharing the
   * handlers, the failure counts and the settled ids. The client keeps one receive in
   * flight per consumer, and a receive returns at most the proxy's batch: with one, the
   * re-pops of throttled LiteTopics take turns with healthy ones. Default
   * `DEFAULT_RECEIVERS` (receivers.ts).
   */
  readonly receivers?: number;
}

/** Smallest pause the client accepts; the dispatcher sleeps locally below it. */
export const MIN_SUSPEND_MS = 50;
/** How long a not-yet-started handler waits before its message is handed back, once closing. */
const HAND_BACK_MS = MIN_SUSPEND_MS;
const defaultBackoff = (failures: number) => Math.min(60_000, 1_000 * 2 ** (failures - 1));

/**
 * LiteQueue over RocketMQ 5.5 LiteTopics through rocketmq-client-nodejs 1.0.8: a
 * Producer sending with `liteTopic`, and one LitePushConsumer per subscription bound
 * to the parent topic of a wildcard group (so LiteTopics created later are consumed).
 */
export class RocketMQLiteQueue implements LiteQueue {
  private readonly opts: RocketMQLiteQueueOptions;
  private readonly maxAttempts: number;
  private readonly backoff: (failures: number) => number;
  private producer: Promise<Producer> | undefined;
  private readonly subscriptions = new Map<Subscription, RocketMQSubscription>();

  constructor(opts: RocketMQLiteQueueOptions) {
    this.opts = opts;
    this.maxAttempts = opts.maxAttempts ?? 5;
    this.backoff = opts.retryBackoffMs ?? defaultBackoff;
  }

  async send(liteTopic: string, body: string): Promise<{ messageId: string }> {
    let producer: Producer;
    try {
      producer = await this.startProducer();
    } catch (err) {
      throw new QueueUnavailableError(`RocketMQ producer cannot start: ${String(err)}`, { cause: err });
    }
    try {
      const receipt = await this.withTimeout(
        producer.send({ topic: this.opts.parentTopic, liteTopic, body: Buffer.from(body, 'utf8') }),
        this.opts.sendTimeoutMs ?? 5_000,
        `RocketMQ send to ${liteTopic}`,
      );
      return { messageId: receipt.messageId };
    } catch (err) {
      throw mapSendError(err, liteTopic);
    }
  }

  subscribe(handler: MessageHandler, options: SubscribeOptions): Subscription {
    const subscription = new RocketMQSubscription(
      this.opts,
      handler,
      options,
      this.maxAttempts,
      this.backoff,
      (liteTopic) => this.nudge(liteTopic),
    );
    const tracked: Subscription = {
      close: async () => {
        this.subscriptions.delete(tracked);
        await subscription.close();
      },
    };
    this.subscriptions.set(tracked, subscription);
    return tracked;
  }

  /** Best effort: a nudge that cannot be sent leaves the LiteTopic to its next arrival. */
  private async nudge(liteTopic: string): Promise<void> {
    try {
      const producer = await this.startProducer();
      await this.withTimeout(
        producer.send({ topic: this.opts.parentTopic, liteTopic, tag: NUDGE_TAG, body: Buffer.from(NUDGE_TAG) }),
        this.opts.sendTimeoutMs ?? 5_000,
        `RocketMQ nudge to ${liteTopic}`,
      );
    } catch (err) {
      (this.opts.log ?? silentLogger).warn(
        { component: 'rocketmq-queue', liteTopic, err: String(err) },
        'could not nudge a silent LiteTopic',
      );
    }
  }

  /** Resolves once every open subscription's consumer is connected to the proxy. */
  async ready(): Promise<void> {
    await Promise.all([...this.subscriptions.values()].map((s) => s.started));
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions.keys()].map((s) => s.close()));
    const producer = this.producer;
    this.producer = undefined;
    if (producer) await producer.then((p) => p.shutdown()).catch(() => undefined);
  }

  private startProducer(): Promise<Producer> {
    if (!this.producer) {
      const producer = new Producer({
        endpoints: this.opts.endpoints,
        namespace: this.opts.namespace ?? '',
        topic: this.opts.parentTopic,
        maxAttempts: 2,
        ...accessOptions(this.opts),
        logger: rocketmqClientLogger(this.opts.log ?? silentLogger),
      });
      this.producer = producer.startup().then(() => producer);
      // A failed start is not cached: the next send tries again (the broker may be back).
      this.producer.catch(() => (this.producer = undefined));
    }
    return this.producer;
  }

  private withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
    return withTimeout(this.opts.clock, work, ms, () => new QueueUnavailableError(`${what} timed out after ${ms} ms`));
  }
}

/** One receiver of a subscription: the consumer now, and its start while it starts. */
interface Receiver {
  starting: Promise<void>;
  consumer: LitePushConsumer | undefined;
  /** Re-syncs the consumer's lite subscription after a failed sync or receive (lite-subscription.ts). */
  keeper?: LiteSubscriptionKeeper;
}

/**
 * `receivers` LitePushConsumers, each started in the background (and retried until it
 * is up or closed), and replaced by a new one when it keeps failing to receive. Failure
 * counts, settled ids and running handlers belong to the subscription, not to a
 * consumer, so a message redelivered to another consumer is not handled again while or
 * after one handled it.
 */
class RocketMQSubscription {
  private readonly receivers: Receiver[];
  /** Replaced consumers still settling the messages they had received. */
  private readonly retiring = new Set<Promise<void>>();
  private closing = false;
  private readonly log: Logger;
  private readonly limiter: Limiter;
  private readonly failures = new FailureCounts();
  private readonly settled = new SettledIds();
  /** Messages being handled here, by id, with their result to come. */
  private readonly running = new Map<string, Promise<RmqResult>>();
  private readonly nudger: StallNudger | undefined;
  private readonly recalls = new PendingRecalls();
  private readonly inHand: InHandRenewal;

  constructor(
    private readonly opts: RocketMQLiteQueueOptions,
    private readonly handler: MessageHandler,
    private readonly options: SubscribeOptions,
    private readonly maxAttempts: number,
    private readonly backoff: (failures: number) => number,
    nudge: (liteTopic: string) => Promise<void>,
  ) {
    this.limiter = new Limiter(options.concurrency);
    this.inHand = new InHandRenewal({ clock: opts.clock });
    const afterMs = opts.nudgeAfterMs ?? 500;
    const send = (liteTopic: string) => {
      opts.probe?.nudged();
      return nudge(liteTopic);
    };
    this.nudger = afterMs > 0 ? new StallNudger({ clock: opts.clock, afterMs, send }) : undefined;
    this.log = opts.log ?? silentLogger;
    const count = opts.receivers ?? DEFAULT_RECEIVERS;
    if (!Number.isInteger(count) || count < 1) throw new Error(`receivers must be a positive integer, got ${count}`);
    this.receivers = Array.from({ length: count }, () => ({ starting: Promise.resolve(), consumer: undefined }));
    for (const receiver of this.receivers) receiver.starting = this.startInBackground(receiver);
  }

  /** Resolves once every current consumer is connected; for callers that must not send before. */
  get started(): Promise<void> {
    return Promise.all(this.receivers.map((r) => r.starting)).then(() => undefined);
  }

  private startInBackground(receiver: Receiver): Promise<void> {
    const started = this.start(receiver);
    // close() reports start failures; nobody else may be listening.
    started.catch(() => undefined);
    return started;
  }

  private async start(receiver: Receiver): Promise<void> {
    // The client caches per consumer: the share of what one would hold, but at least 32 each.
    const cache = Math.max(32, Math.ceil((this.options.concurrency * 4) / this.receivers.length));
    let delay = 500;
    for (;;) {
      if (this.closing) throw new Error('subscription closed before the consumer started');
      try {
        const consumer = await new LitePushConsumerBuilder()
          .setClientConfiguration({
            endpoints: this.opts.endpoints,
            namespace: this.opts.namespace ?? '',
            logger: rocketmqClientLogger(this.opts.log ?? silentLogger),
            ...accessOptions(this.opts),
          })
          .setConsumerGroup(this.opts.consumerGroup)
          .bindTopic(this.opts.parentTopic)
          // Orderly group: different LiteTopics of one received batch run in parallel
          // (still FIFO within each). A non-orderly group ignores it: the whole batch
          // runs at once, bounded by the limiter.
          .setEnableFifoConsumeAccelerator(true)
          // Messages waiting for a handler slot use up their invisible time; keep few cached.
          .setMaxCacheMessageCount(cache)
          .setMessageListener({ consume: (view) => this.consume(view) })
          .build();
        receiver.consumer = consumer;
        this.watch(receiver, consumer);
        if (this.closing) await consumer.close();
        return;
      } catch (err) {
        await new Promise<void>((resolve) => this.opts.clock.setTimer(delay, resolve));
        delay = Math.min(10_000, delay * 2);
        if (this.closing) throw err;
      }
    }
  }

  /** Replaces `consumer` by a new one once its receives have failed long enough. */
  private watch(receiver: Receiver, consumer: LitePushConsumer): void {
    const watchdog = new ReceiveWatchdog(this.opts.receiveWatchdog ?? defaultReceiveWatchdog);
    const probe = this.opts.probe;
    const keeper = keepLiteSubscription(consumer, { clock: this.opts.clock });
    if (!keeper)
      this.log.warn(
        { component: 'rocketmq-queue' },
        'client has no lite subscription manager to keep; a restarted broker waits for its 30 s re-sync',
      );
    receiver.keeper = keeper;
    let since = this.opts.clock.now();
    const watched = observeReceives(consumer, {
      ok: (messages) => {
        watchdog.succeeded();
        keeper?.receiveSucceeded();
        // Receives of one process queue run one after another: this one began when the last ended.
        const now = this.opts.clock.now();
        probe?.received(messages.length, now - since);
        since = now;
        if (renew) this.keepInvisible(messages as readonly MessageView[], renew);
      },
      failed: (err) => {
        since = this.opts.clock.now();
        keeper?.receiveFailed();
        if (consumer !== receiver.consumer || this.closing) return;
        if (watchdog.failed(err, this.opts.clock.now())) this.replace(receiver, consumer, watchdog.failures, err);
      },
    });
    if (!watched)
      this.log.warn({ component: 'rocketmq-queue' }, 'client has no receiveMessage to observe; no receive watchdog');
    // Before settle-retry's wrapper, so a recall goes to the proxy once (recall.ts). The probe
    // hears of the Suspends the client sends on its own too, which no handler sees.
    const suspended = (id: string, recall: (ms: number) => Promise<boolean>, ms?: number) => {
      this.recalls.applied(id, () => recall(MIN_SUSPEND_MS));
      if (ms !== undefined) probe?.suspended(id, this.opts.clock.now(), ms);
    };
    if (!observeSuspends(consumer, suspended))
      this.log.warn(
        { component: 'rocketmq-queue' },
        'client has no invisible-time call to observe; Suspends cannot be recalled',
      );
    const settles = retryRefusedSettles(consumer, {
      clock: this.opts.clock,
      report: (refusal) =>
        this.log.warn(
          { component: 'rocketmq-queue', consumerGroup: this.opts.consumerGroup, ...refusal },
          refusal.retrying
            ? 'the proxy refused to settle a message; trying again'
            : 'the proxy refused to settle a message',
        ),
    });
    if (!settles)
      this.log.warn(
        { component: 'rocketmq-queue' },
        'client has no ack to observe; a refused ack can block its LiteTopic for the invisible time',
      );
    // Outermost, so a settle ends the renewals once, before any retry of it. Renewing a
    // message whose settles go unseen would keep it invisible past them: no renewals then.
    const renew = endRenewalsOnSettle(consumer, (id) => this.inHand.settled(id))
      ? invisibleRenewer(consumer)
      : undefined;
    if (!renew)
      this.log.warn(
        { component: 'rocketmq-queue' },
        'client has no invisible-time request to build or settle calls to observe; held lite messages are delivered again after 60 s',
      );
  }

  /** From its arrival until it is settled, each received message stays invisible (renew.ts). */
  private keepInvisible(
    views: readonly MessageView[],
    renew: (view: MessageView, handle?: string) => Promise<unknown>,
  ): void {
    for (const view of views) {
      if (typeof view?.messageId !== 'string' || view.tag === NUDGE_TAG) continue;
      this.inHand.received(view.messageId, (handle) => renew(view, handle));
    }
  }

  private replace(receiver: Receiver, consumer: LitePushConsumer, failures: number, err: unknown): void {
    this.log.warn(
      {
        component: 'rocketmq-queue',
        consumerGroup: this.opts.consumerGroup,
        failures,
        err: err instanceof Error ? err.message : String(err),
      },
      'consumer keeps failing to receive; replacing it with a new client',
    );
    receiver.consumer = undefined;
    receiver.keeper?.stop();
    // The old client settles what it already received (acks through its own receipts)
    // while the new one starts; a redelivery meets the same settled/running maps.
    const retired = consumer.close().catch((closeErr: unknown) => {
      this.log.warn({ component: 'rocketmq-queue', err: String(closeErr) }, 'replaced consumer did not close cleanly');
    });
    this.retiring.add(retired);
    void retired.finally(() => this.retiring.delete(retired));
    receiver.starting = this.startInBackground(receiver);
  }

  private consume(view: MessageView): Promise<RmqResult> {
    const liteTopic = view.liteTopic ?? '';
    // Delivered again, by a recall or not: a recall of its last Suspend has nothing to end.
    this.recalls.forget(view.messageId);
    const nudge = view.tag === NUDGE_TAG;
    // Per message at debug: with the client's receive lines and the refused settles (warn),
    // what tells a message the broker holds from one a handler holds (CHAOS_LOG_LEVEL=debug).
    this.log.debug(
      {
        component: 'rocketmq-queue',
        messageId: view.messageId,
        liteTopic,
        deliveryAttempt: view.deliveryAttempt,
        nudge,
      },
      'message arrived',
    );
    // A nudge only had to arrive (nudge.ts).
    if (nudge) return Promise.resolve(RmqResult.SUCCESS);
    const nudger = this.nudger;
    nudger?.arrived(liteTopic);
    // Renewals end as the client settles (renew.ts, endRenewalsOnSettle).
    const result = this.consumeProbed(view, liteTopic);
    if (!nudger) return result;
    return result.then(
      (r) => {
        nudger.settled(liteTopic, r instanceof ConsumeResultSuspend ? r.suspendTimeMs : 0);
        return r;
      },
      (err: unknown) => {
        nudger.settled(liteTopic);
        throw err;
      },
    );
  }

  private consumeProbed(view: MessageView, liteTopic: string): Promise<RmqResult> {
    const probe = this.opts.probe;
    if (!probe) return this.consumeTracked(view);
    probe.arrived(liteTopic, view.messageId, view.bornTimestamp?.getTime(), this.opts.clock.now());
    const result = this.consumeTracked(view);
    probe.queuedForHandler(this.limiter.queued);
    return result.then(
      (r) => {
        const suspendedMs = r instanceof ConsumeResultSuspend ? r.suspendTimeMs : 0;
        probe.settled(liteTopic, view.messageId, this.opts.clock.now(), suspendedMs);
        return r;
      },
      (err: unknown) => {
        probe.settled(liteTopic, view.messageId, this.opts.clock.now());
        throw err;
      },
    );
  }

  private consumeTracked(view: MessageView): Promise<RmqResult> {
    // In a non-orderly group a sibling's Suspend makes the broker deliver the batch
    // again from the suspended message on: messages acked here meanwhile are acked
    // again, and one still being handled gets the result of the run in progress
    // (settled through the newer receipt, which the broker now expects).
    if (this.settled.has(view.messageId)) return Promise.resolve(RmqResult.SUCCESS);
    const running = this.running.get(view.messageId);
    if (running) return running;
    const result = this.consumeOnce(view).finally(() => this.running.delete(view.messageId));
    this.running.set(view.messageId, result);
    return result;
  }

  private async consumeOnce(view: MessageView): Promise<RmqResult> {
    if (this.closing) return ConsumeResultSuspend.of(HAND_BACK_MS);
    return this.limiter.run(async (release) => {
      if (this.closing) return ConsumeResultSuspend.of(HAND_BACK_MS);
      const failures = this.failures.get(view.messageId);
      const message: LiteMessage = {
        messageId: view.messageId,
        liteTopic: view.liteTopic ?? '',
        body: view.body.toString('utf8'),
        attempt: failures + 1,
      };
      if (failures >= this.maxAttempts) return this.deadLetter(message, 'dead-letter sink failed earlier');
      let result: ConsumeResult;
      try {
        result = await this.handler(message, { release });
      } catch (err) {
        result = { kind: 'failure', reason: `handler threw: ${err instanceof Error ? err.message : String(err)}` };
      }
      return this.settle(message, result);
    });
  }

  private async settle(message: LiteMessage, result: ConsumeResult): Promise<RmqResult> {
    switch (result.kind) {
      case 'success':
        this.failures.forget(message.messageId);
        this.settled.add(message.messageId);
        return RmqResult.SUCCESS;
      case 'suspend':
        if (result.onRecallable) this.recalls.expect(message.messageId, result.onRecallable);
        return ConsumeResultSuspend.of(Math.max(MIN_SUSPEND_MS, Math.round(result.ms)));
      case 'failure': {
        const failures = message.attempt;
        this.failures.set(message.messageId, failures);
        const reason = result.reason ?? 'handler failed';
        if (failures >= this.maxAttempts) return this.deadLetter(message, reason);
        // Backoff as a Suspend: the broker keeps the message at the head of its
        // LiteTopic (lite pop is FIFO per LiteTopic in either kind of group) and only
        // that LiteTopic waits.
        return ConsumeResultSuspend.of(Math.max(MIN_SUSPEND_MS, Math.round(this.backoff(failures))));
      }
    }
  }

  private async deadLetter(message: LiteMessage, reason: string): Promise<RmqResult> {
    try {
      await this.opts.onDeadLetter({ message, reason: `${reason} (after ${message.attempt} attempts)` });
    } catch {
      return ConsumeResultSuspend.of(Math.max(MIN_SUSPEND_MS, Math.round(this.backoff(this.maxAttempts))));
    }
    this.failures.forget(message.messageId);
    this.settled.add(message.messageId);
    return RmqResult.SUCCESS;
  }

  /** Stops taking messages; handlers already running finish and their results are settled. */
  async close(): Promise<void> {
    this.closing = true;
    this.nudger?.close();
    try {
      // The client waits for its in-flight long poll and for every cached message to
      // settle; messages not yet handled are handed back with a short Suspend above.
      await Promise.all(
        this.receivers.map(async (receiver) => {
          try {
            await receiver.starting;
          } catch {
            return;
          }
          receiver.keeper?.stop();
          await receiver.consumer?.close();
        }),
      );
    } finally {
      await Promise.all(this.retiring);
      // Only now: handlers still draining above kept their messages invisible.
      this.inHand.close();
    }
  }
}

function accessOptions(opts: RocketMQLiteQueueOptions): {
  sslEnabled?: boolean;
  sessionCredentials?: { accessKey: string; accessSecret: string };
} {
  if (!opts.access) return {};
  return {
    sslEnabled: opts.access.sslEnabled,
    ...(opts.access.credentials ? { sessionCredentials: { ...opts.access.credentials } } : {}),
  };
}
