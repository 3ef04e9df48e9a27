/**
 * Wakes LiteTopics the broker forgot.
 *
 * RocketMQ 5.5.0 delivers a LiteTopic to a wildcard consumer only on a "has messages"
 * event: one per arrival, and one when an ack or a pause's end unblocks the LiteTopic.
 * When that ack lands while a pop that already visited the LiteTopic is still being
 * assembled, the pop drops the re-dispatched event (apache/rocketmq#11191, fixed after
 * 5.5.1), and the LiteTopic's next messages wait for a later arrival. Under a closed
 * loop none comes, and some requests are never delivered
 * (test/lib/queue/rocketmq-stall.int.test.ts reproduces it).
 *
 * So after a message of a LiteTopic is settled here (acked, or paused until a time),
 * if nothing of that LiteTopic arrives within `afterMs` (plus the pause) and nothing of
 * it is in hand, one nudge is sent to it: an empty message whose arrival makes a fresh
 * event. Lite pop is FIFO per LiteTopic, so the nudge comes after whatever was queued
 * before it and is acked without reaching the handler; its own ack schedules nothing,
 * so an idle LiteTopic costs at most one nudge per quiet spell.
 */
import type { Clock } from '../../clock/clock.js';

/** The tag that marks a nudge; a message carrying it never reaches a handler. */
export const NUDGE_TAG = 'sluice-nudge';

export interface NudgerOptions {
  readonly clock: Clock;
  /** How long after a settle (plus its pause) a silent LiteTopic is nudged. */
  readonly afterMs: number;
  /** Sends one nudge; failures are the caller's to log (a nudge is best effort). */
  readonly send: (liteTopic: string) => Promise<void>;
}

interface TopicState {
  /** Messages of this LiteTopic in hand here (arrived, not settled). */
  inHand: number;
  /** When a message of this LiteTopic last arrived. */
  lastArrival: number;
  cancel?: () => void;
}

export class StallNudger {
  private readonly topics = new Map<string, TopicState>();
  private closed = false;

  constructor(private readonly opts: NudgerOptions) {}

  arrived(liteTopic: string): void {
    const state = this.state(liteTopic);
    state.inHand += 1;
    state.lastArrival = this.opts.clock.now();
    state.cancel?.();
    state.cancel = undefined;
  }

  /** A message of `liteTopic` left our hands; `pausedMs` when it was suspended for that long. */
  settled(liteTopic: string, pausedMs = 0): void {
    const state = this.topics.get(liteTopic);
    if (!state) return;
    state.inHand = Math.max(0, state.inHand - 1);
    if (this.closed || state.inHand > 0) return;
    const settledAt = this.opts.clock.now();
    state.cancel?.();
    state.cancel = this.opts.clock.setTimer(pausedMs + this.opts.afterMs, () => {
      state.cancel = undefined;
      if (state.inHand === 0) this.topics.delete(liteTopic);
      if (this.closed || state.inHand > 0 || state.lastArrival > settledAt) return;
      void this.opts.send(liteTopic);
    });
  }

  /** Pending nudges are dropped: a closing consumer wakes nothing. */
  close(): void {
    this.closed = true;
    for (const state of this.topics.values()) state.cancel?.();
    this.topics.clear();
  }

  private state(liteTopic: string): TopicState {
    let state = this.topics.get(liteTopic);
    if (!state) {
      state = { inHand: 0, lastArrival: 0 };
      this.topics.set(liteTopic, state);
    }
    return state;
  }
}
