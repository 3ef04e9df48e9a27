/**
 * Keeps a LitePushConsumer's wildcard lite subscription registered at the broker.
 *
 * Why: a 5.5 broker hands a wildcard consumer "LiteTopic has messages" events only
 * while it holds that client's lite subscription, and it holds it in memory: a
 * restarted broker has none. rocketmq-client-nodejs 1.0.8 syncs the subscription at
 * start-up and then every 30 s, and a failed sync is logged and dropped until the next
 * tick. So after a broker restart, receives worked again but nothing was delivered
 * until that tick: in the chaos bench's broker-restart, the requests redriven from the
 * spillover waited in the broker for the next periodic sync, and some expired.
 *
 * Here the subscription is synced once more as soon as the consumer is kept (its
 * start-up sync may have failed unseen), a failed sync is tried again soon (`retryMs`,
 * doubling up to `maxRetryMs`) until one succeeds, and the subscription is synced at
 * once when receives work again after failing (the broker came back, maybe empty-handed).
 */
import type { Clock } from '../../clock/clock.js';

export interface LiteSubscriptionKeeperOptions {
  readonly clock: Clock;
  /** First wait before a failed sync is tried again. */
  readonly retryMs?: number;
  /** The longest wait between tries. */
  readonly maxRetryMs?: number;
}

export interface LiteSubscriptionKeeper {
  /** A receive failed: the next one to succeed syncs the subscription. */
  receiveFailed(): void;
  receiveSucceeded(): void;
  /** No more syncs from here (the consumer is closing or replaced). */
  stop(): void;
}

/** The parts of the client's LiteSubscriptionManager this relies on (1.0.8; not public API). */
interface SubscriptionManager {
  syncLiteSubscription(...args: unknown[]): Promise<unknown>;
  syncAllLiteSubscription(): Promise<void>;
}

function subscriptionManager(consumer: object): SubscriptionManager | undefined {
  const manager = (consumer as { liteSubscriptionManager?: Partial<SubscriptionManager> }).liteSubscriptionManager;
  if (typeof manager?.syncLiteSubscription !== 'function' || typeof manager.syncAllLiteSubscription !== 'function')
    return undefined;
  return manager as SubscriptionManager;
}

/**
 * Wraps the consumer's subscription sync on the instance. Undefined when the client has
 * no such manager (a different version): the caller runs without and says so.
 */
export function keepLiteSubscription(
  consumer: object,
  opts: LiteSubscriptionKeeperOptions,
): LiteSubscriptionKeeper | undefined {
  const manager = subscriptionManager(consumer);
  if (!manager) return undefined;
  const firstRetry = opts.retryMs ?? 1_000;
  const maxRetry = opts.maxRetryMs ?? 8_000;
  let retryMs = firstRetry;
  let cancelRetry: (() => void) | undefined;
  let receivesFailing = false;
  let stopped = false;

  // The client's own sync (start-up, its 30 s timer) and ours both come through here;
  // syncAllLiteSubscription catches and logs what this rethrows.
  const original = manager.syncLiteSubscription;
  manager.syncLiteSubscription = async (...args: unknown[]) => {
    try {
      const result = await original.apply(manager, args);
      retryMs = firstRetry;
      return result;
    } catch (err) {
      retryLater();
      throw err;
    }
  };

  const syncNow = () => {
    cancelRetry?.();
    cancelRetry = undefined;
    if (!stopped) void manager.syncAllLiteSubscription();
  };
  function retryLater(): void {
    if (stopped || cancelRetry) return;
    cancelRetry = opts.clock.setTimer(retryMs, () => {
      cancelRetry = undefined;
      syncNow();
    });
    retryMs = Math.min(maxRetry, retryMs * 2);
  }

  // The client's start-up sync ran before this wrapper could see it fail (a consumer
  // started while the proxy still answers "group not found"): one more sync now.
  syncNow();
  return {
    receiveFailed() {
      receivesFailing = true;
    },
    receiveSucceeded() {
      if (!receivesFailing) return;
      receivesFailing = false;
      syncNow();
    },
    stop() {
      stopped = true;
      cancelRetry?.();
      cancelRetry = undefined;
    },
  };
}
