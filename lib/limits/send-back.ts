/**
 * When a request sent back from a full room returns: its place in its tier's return
 * schedule, or its LiteTopic's pending return.
 *
 * The schedule: sent-back requests of one tier × model return `placeMs` apart (a few
 * expected starts), never all at once, which would only find the room full again. It is
 * one schedule for every dispatcher: kept per dispatcher, two schedules spaced on their
 * own fell in and out of step, and their returns bunched (seed2-burst at full size with
 * two dispatchers idled the GPU while requests waited, at the campaign's end).
 *
 * The LiteTopic's return: the broker (and the embedded engine) keeps one pause per
 * LiteTopic, and each Suspend replaces it. When several messages of one LiteTopic are in
 * flight at once (a non-orderly group, or the embedded engine's concurrent mode) and each
 * is sent back for its own place, the last one's place becomes the LiteTopic's, and the
 * places booked for the others return nothing: in seed2-burst at full size most send-backs
 * were made while their LiteTopic's return was pending, and the room drained in the gaps. So a send-back whose LiteTopic returns soon enough returns with it. It
 * still books its place: it needs room when it is back.
 *
 * The Lua twin is lib/store/redis/send-back.ts.
 */

export interface SendBackSpec {
  /** How long the room needs to drain first, ms from now: the earliest return. */
  readonly ms: number;
  /** The spacing this return books in the schedule, ms. */
  readonly placeMs: number;
  /**
   * A pending return nearer than this is not joined: the LiteTopic may be back already,
   * and this Suspend would only pause it again (the broker's shortest Suspend).
   */
  readonly minMs: number;
  /**
   * The message's deadline, ms from now: it never returns later than that. Its Suspend then
   * replaces the LiteTopic's pause, so a pending return later than it moves to it.
   */
  readonly maxMs: number;
  /**
   * The longest time away. A send-back held to it returns outside the schedule: counted in,
   * it would push every later one past the bound too, and they would all come back at
   * once to a full room, and again.
   */
  readonly boundMs: number;
}

export interface SendBackState {
  /** When the LiteTopic returns from an earlier send-back, absolute. */
  readonly pendingAt: number | undefined;
  /** The tier's next free place in the schedule, absolute. */
  readonly nextAt: number | undefined;
}

export interface SendBackDecision {
  /** ms from now until this message returns. */
  readonly ms: number;
  /** The LiteTopic's return to store, absolute; undefined: the pending one stands. */
  readonly pendingAt: number | undefined;
  /** The schedule's next place to store, absolute; undefined: unchanged. */
  readonly nextAt: number | undefined;
}

export function sendBack(spec: SendBackSpec, state: SendBackState, now: number): SendBackDecision {
  const at = Math.max(now + spec.ms, state.nextAt ?? 0);
  const nextAt = at - now <= spec.boundMs ? at + spec.placeMs : undefined;
  const cap = Math.max(spec.minMs, Math.ceil(Math.min(spec.maxMs, spec.boundMs)));
  const pending = state.pendingAt;
  if (pending !== undefined && pending - now >= spec.minMs) {
    const left = pending - now;
    return left <= cap ? { ms: left, pendingAt: undefined, nextAt } : { ms: cap, pendingAt: now + cap, nextAt };
  }
  // Whole ms: the broker's Suspend takes them, and a trace shows what was asked.
  const ms = Math.min(cap, Math.max(spec.minMs, Math.ceil(at - now)));
  return { ms, pendingAt: now + ms, nextAt };
}
