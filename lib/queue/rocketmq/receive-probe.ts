/**
 * What a consumer receives and how long its messages sat in the broker first, for a
 * benchmark or an operator asking "why did this message wait": counts only, no effect
 * on consumption.
 *
 * A message's broker wait is from its birth (the producer's timestamp) to the moment
 * the client handed it to us, before our own concurrency limit. It is counted as
 * "behind a predecessor" when a message of the same physical LiteTopic was still
 * unsettled here after it was born: lite pop is FIFO per LiteTopic on the broker, so
 * such a message could not be delivered before its predecessor was acked or suspended.
 * Waits are grouped by a class the caller derives from the LiteTopic (its tier).
 *
 * A message delivered again after it was settled here is counted apart, not as a wait.
 * After a Suspend that is its return, as asked; after an ack it means the broker did not
 * apply the ack (or, in a non-orderly group, a sibling's Suspend delivered the batch again).
 * One delivered again while still in hand means the broker let its invisible time run out
 * under a handler (the dispatcher holds a message while it waits for a GPU slot), or, in a
 * non-orderly group, a sibling's Suspend delivered its batch again.
 *
 * Client 1.0.8's lite FIFO service suspends the messages behind a suspended one in the same
 * received batch on its own; no handler sees them. Told of every Suspend the proxy accepted
 * (`suspended`), the probe counts their returns too, and leaves their broker wait out: it
 * would include the Suspend.
 */
export interface ReceiveProbe {
  /** One receive call (long poll) answered with `messages` after `ms`. */
  received(messages: number, ms: number): void;
  /** A message reached the adapter at `at`. */
  arrived(liteTopic: string, messageId: string, bornAt: number | undefined, at: number): void;
  /** The adapter is done with it at `at` (acked, suspended for `suspendedMs`, dead-lettered). */
  settled(liteTopic: string, messageId: string, at: number, suspendedMs?: number): void;
  /** The proxy accepted a Suspend of it at `at`: after a handler's result, or one the client sent on its own. */
  suspended(messageId: string, at: number, suspendedMs: number): void;
  /** Handlers waiting for the concurrency limit right now. */
  queuedForHandler(n: number): void;
  /** A nudge went to a LiteTopic left silent (nudge.ts). */
  nudged(): void;
  summary(): ReceiveSummary;
}

export interface WaitFigures {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface ReceiveSummary {
  readonly receives: number;
  readonly emptyReceives: number;
  readonly messages: number;
  readonly maxBatch: number;
  /** Receive calls by how long they took (long polls that found nothing last the whole poll). */
  readonly receiveMs: WaitFigures;
  /** Deliveries of messages acked here already (acks the broker did not apply, or a batch delivered again). */
  readonly afterSettled: number;
  /** Deliveries of messages still in hand here (invisible time run out under a handler, or a batch delivered again). */
  readonly whileInHand: number;
  /** Deliveries of messages back from a Suspend: the returns asked for (paced, sent back, backed off). */
  readonly afterSuspend: number;
  /** Of those, the ones back sooner than their Suspend asked (by more than EARLY_SLACK_MS). */
  readonly earlyAfterSuspend: number;
  /**
   * Of the others, how long after their Suspend's end they arrived, ms: the broker's lag in
   * resuming. Those held up meanwhile by a message of their LiteTopic in hand here are apart.
   */
  readonly lateAfterSuspendMs: WaitFigures;
  /**
   * The returns held up past their due time by a message of their LiteTopic in hand here: how
   * late, ms. Lite pop is FIFO, and the client hands a received batch over one message at a time.
   */
  readonly lateBehindAfterSuspendMs: WaitFigures;
  /** Suspends the client sent on its own, for messages no handler saw (behind a suspended one in their batch). */
  readonly suspendedUnseen: number;
  /** Most messages received and not yet settled at once (the client's cache, as it counts it). */
  readonly peakUnsettled: number;
  readonly unsettledNow: number;
  readonly peakQueuedForHandler: number;
  /** Nudges sent to LiteTopics left silent after a settle (each one a message of its own). */
  readonly nudges: number;
  /** Broker wait by class: all, and the part that was behind an unsettled predecessor. */
  readonly brokerWait: Readonly<
    Record<string, { readonly all: WaitFigures; readonly behind: WaitFigures; readonly free: WaitFigures }>
  >;
}

export function figures(values: readonly number[]): WaitFigures {
  if (values.length === 0) return { count: 0, p50: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    count: sorted.length,
    p50: Math.round(at(0.5)),
    p99: Math.round(at(0.99)),
    max: Math.round(sorted[sorted.length - 1]!),
  };
}

/** Settled ids remembered, to tell a delivery after settling from a first one. */
const REMEMBER_SETTLED = 100_000;

/** A return this much sooner than its Suspend asked is counted early (timer and clock granularity aside). */
const EARLY_SLACK_MS = 100;

interface Settled {
  readonly at: number;
  readonly suspendedMs: number;
  readonly handled: boolean;
}

export function createReceiveProbe(classOf: (liteTopic: string) => string): ReceiveProbe {
  let receives = 0;
  let emptyReceives = 0;
  let messages = 0;
  let maxBatch = 0;
  const receiveMs: number[] = [];
  const unsettled = new Map<string, string>();
  /**
   * Per settled id: when, and the Suspend it was given (0: acked or dead-lettered); `handled`
   * while a handler's Suspend waits for the proxy's answer.
   */
  const settledIds = new Map<string, Settled>();
  let suspendedUnseen = 0;
  let afterSettled = 0;
  let whileInHand = 0;
  let afterSuspend = 0;
  let earlyAfterSuspend = 0;
  const lateAfterSuspendMs: number[] = [];
  const lateBehindMs: number[] = [];
  let peakUnsettled = 0;
  let peakQueued = 0;
  let nudges = 0;
  /** Per LiteTopic: messages unsettled here, and when the last one was settled. */
  const topics = new Map<string, { open: number; lastSettledAt: number }>();
  const waits = new Map<string, { all: number[]; behind: number[]; free: number[] }>();
  const remember = (messageId: string, entry: Settled) => {
    settledIds.delete(messageId);
    settledIds.set(messageId, entry);
    if (settledIds.size > REMEMBER_SETTLED) settledIds.delete(settledIds.keys().next().value!);
  };
  return {
    received(n, ms) {
      receives++;
      if (n === 0) emptyReceives++;
      messages += n;
      maxBatch = Math.max(maxBatch, n);
      receiveMs.push(ms);
    },
    arrived(liteTopic, messageId, bornAt, at) {
      if (unsettled.has(messageId)) {
        whileInHand++;
        return;
      }
      const before = settledIds.get(messageId);
      if (before?.suspendedMs === 0) {
        afterSettled++;
        return;
      }
      const topic = topics.get(liteTopic) ?? { open: 0, lastSettledAt: -Infinity };
      topics.set(liteTopic, topic);
      if (before) {
        // Back from a Suspend, in hand again: its next settle counts.
        afterSuspend++;
        const dueAt = before.at + before.suspendedMs;
        if (at < dueAt - EARLY_SLACK_MS) earlyAfterSuspend++;
        // Lite pop is FIFO: held up by one of its LiteTopic in hand here past its due time, it is
        // late by our hold, not the broker's.
        else
          (topic.open > 0 || topic.lastSettledAt > dueAt ? lateBehindMs : lateAfterSuspendMs).push(
            Math.max(0, at - dueAt),
          );
        settledIds.delete(messageId);
      }
      unsettled.set(messageId, liteTopic);
      peakUnsettled = Math.max(peakUnsettled, unsettled.size);
      // A returning message's broker wait was counted at its first arrival.
      if (!before && bornAt !== undefined) {
        const cls = classOf(liteTopic);
        const w = waits.get(cls) ?? { all: [], behind: [], free: [] };
        waits.set(cls, w);
        const ms = Math.max(0, at - bornAt);
        w.all.push(ms);
        (topic.open > 0 || topic.lastSettledAt > bornAt ? w.behind : w.free).push(ms);
      }
      topic.open++;
    },
    settled(liteTopic, messageId, at, suspendedMs = 0) {
      if (!unsettled.delete(messageId)) return;
      remember(messageId, { at, suspendedMs, handled: suspendedMs > 0 });
      const topic = topics.get(liteTopic);
      if (!topic) return;
      topic.open--;
      topic.lastSettledAt = at;
    },
    suspended(messageId, at, suspendedMs) {
      // A copy delivered again while one is in hand here: the one in hand settles for itself.
      if (unsettled.has(messageId)) return;
      if (!settledIds.get(messageId)?.handled) suspendedUnseen++;
      // From the proxy's answer on: the Suspend runs from there.
      remember(messageId, { at, suspendedMs, handled: false });
    },
    queuedForHandler(n) {
      peakQueued = Math.max(peakQueued, n);
    },
    nudged() {
      nudges++;
    },
    summary() {
      const brokerWait: Record<string, { all: WaitFigures; behind: WaitFigures; free: WaitFigures }> = {};
      for (const [cls, w] of [...waits].sort(([a], [b]) => a.localeCompare(b))) {
        brokerWait[cls] = { all: figures(w.all), behind: figures(w.behind), free: figures(w.free) };
      }
      return {
        receives,
        emptyReceives,
        messages,
        afterSettled,
        whileInHand,
        afterSuspend,
        earlyAfterSuspend,
        lateAfterSuspendMs: figures(lateAfterSuspendMs),
        lateBehindAfterSuspendMs: figures(lateBehindMs),
        suspendedUnseen,
        maxBatch,
        receiveMs: figures(receiveMs),
        peakUnsettled,
        unsettledNow: unsettled.size,
        peakQueuedForHandler: peakQueued,
        nudges,
        brokerWait,
      };
    },
  };
}
