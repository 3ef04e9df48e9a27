/**
 * Keeping a waiting answer alive through CloudFront, whose origin read timeout (60 s at
 * most without a quota raise) cuts a response that sends no byte for that long, first
 * byte or between bytes. A request that waits longer in the queue, or at the GPU, sends
 * bytes a client ignores: SSE comments in a stream, whitespace before a JSON body (JSON
 * allows it, and OpenAI clients parse the body as JSON).
 */
import type { Clock } from '../../lib/clock/clock.js';

/** An SSE comment line: EventSource and OpenAI's stream parsers skip it. */
export const SSE_KEEPALIVE = ': keepalive\n\n';
/** Leading whitespace of a JSON body. */
export const JSON_KEEPALIVE = '\n';

const IDLE = Symbol('idle');

/** Settles with `pending`'s value, or with `undefined` after `ms` (then `pending` still runs). */
export async function within<T>(clock: Clock, pending: Promise<T>, ms: number): Promise<{ value: T } | undefined> {
  let cancel = () => {};
  const idle = new Promise<typeof IDLE>((resolve) => {
    cancel = clock.setTimer(ms, () => resolve(IDLE));
  });
  try {
    const winner = await Promise.race([pending.then((value) => ({ value })), idle]);
    return winner === IDLE ? undefined : winner;
  } finally {
    cancel();
  }
}

/** Awaits `pending`, calling `onIdle` after every `intervalMs` it has not settled. */
export async function awaitKeepingAlive<T>(
  clock: Clock,
  pending: Promise<T>,
  intervalMs: number,
  onIdle: () => Promise<void>,
): Promise<T> {
  for (;;) {
    const done = await within(clock, pending, intervalMs);
    if (done) return done.value;
    await onIdle();
  }
}
