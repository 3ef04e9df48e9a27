/**
 * When a LiteTopic sent back from a full room returns. The broker (and the embedded
 * engine) keeps one pause per LiteTopic, and each Suspend replaces it: when several
 * messages of one LiteTopic are in flight at once (a non-orderly group, or the
 * embedded engine's concurrent mode) and each is sent back for its own place in the
 * return schedule, the last one's place becomes the LiteTopic's, and the places
 * booked for the others return nothing: in seed2-burst at full size 968 of 1,202
 * send-backs were made while their LiteTopic's return was pending, and the room
 * drained in the gaps. So a send-back whose LiteTopic returns soon enough returns
 * with it. The state is the LiteTopic's pending return, shared by every dispatcher
 * (a LiteTopic's messages in flight may be spread over several). The Lua twin is
 * lib/store/redis/send-back.ts.
 */

export interface SendBackSpec {
  /** When this send-back would return on its own, ms from now. */
  readonly ms: number;
  /**
   * A pending return nearer than this is not joined: the LiteTopic may be back
   * already, and this Suspend would only pause it again (the broker's shortest Suspend).
   */
  readonly minMs: number;
  /**
   * The message's deadline, ms from now: it never returns later than that. Its Suspend then
   * replaces the LiteTopic's pause, so a pending return later than it moves to it.
   */
  readonly maxMs: number;
}

export interface SendBackDecision {
  /** ms from now until the LiteTopic returns, and this message with it. */
  readonly ms: number;
  /** The LiteTopic's return to store, absolute; undefined: the pending one stands. */
  readonly at: number | undefined;
}

export function sendBack(spec: SendBackSpec, pendingAt: number | undefined, now: number): SendBackDecision {
  const cap = Math.max(spec.minMs, Math.ceil(spec.maxMs));
  if (pendingAt !== undefined && pendingAt - now >= spec.minMs) {
    const left = pendingAt - now;
    return left <= cap ? { ms: left, at: undefined } : { ms: cap, at: now + cap };
  }
  const ms = Math.min(cap, Math.max(spec.minMs, Math.ceil(spec.ms)));
  return { ms, at: now + ms };
}
