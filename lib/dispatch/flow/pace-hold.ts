/**
 * Short pace waits held in the dispatcher instead of a Suspend. A message whose
 * LiteTopic's bucket has booked it a release slot a little ahead would otherwise
 * go back to the broker and be delivered again: one more delivery per paced
 * message, and on a real broker a resume that comes later than asked. Held here
 * it keeps its worker until the booked instant, so the hold is bounded: a few
 * at a time (they share the flow-control layer's bound with the requests
 * waiting for a slot) and short waits only. Past either bound the message
 * Suspends as the first seed does, so throttled LiteTopics never take the
 * workers healthy ones need.
 */
import { sleep, type Clock } from '../../clock/clock.js';

export interface PaceHoldOptions {
  readonly clock: Clock;
  /** Messages held at once at most. */
  readonly maxHeld: number;
  /** Longer waits Suspend. */
  readonly maxHoldMs: number;
  /** Whether the flow-control layer has room for one more held message. */
  readonly room: (held: number) => boolean;
}

export interface PaceHold {
  /** Resolves after `ms`, or undefined when it may not hold: the caller Suspends instead. */
  hold(ms: number): Promise<void> | undefined;
  held(): number;
}

export function createPaceHold(o: PaceHoldOptions): PaceHold {
  let held = 0;
  return {
    held: () => held,
    hold(ms) {
      if (ms > o.maxHoldMs || held >= o.maxHeld || !o.room(held)) return undefined;
      held++;
      return sleep(o.clock, ms).finally(() => {
        held--;
      });
    },
  };
}
