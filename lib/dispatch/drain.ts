/**
 * A stop that ends in bounded time. Work in flight gets `drainMs` to finish; then
 * its upstream calls are cut and whatever its handler answers is turned into a
 * hand-back (a Suspend: the message returns to its LiteTopic un-acked, its attempt
 * not counted), so another dispatcher, or this one after a restart, serves it.
 */
import { sleep, type Clock } from '../clock/clock.js';
import { Consume, type MessageHandler } from '../queue/types.js';
import type { UpstreamCall, UpstreamClient } from '../upstream/client.js';

/** Defaults of `graceMs` and `exitMs`: with them, what a stop takes after the drain time (infra/config.ts sizes the task's stop timeout from it). */
export const DRAIN_GRACE_MS = 2_000;
export const DRAIN_EXIT_MS = 2_000;

export interface DrainOptions {
  readonly clock: Clock;
  /** How long work in flight may run after the stop begins. */
  readonly drainMs: number;
  /** After the drain time, how long cut calls get to give their slots back and return. */
  readonly graceMs?: number;
  /** After the grace, how long the caller may take to close its parts before the process is gone. */
  readonly exitMs?: number;
  /**
   * Suspend asked for a handed-back message. Default: until the process is surely gone
   * (grace + exit + 1 s). A shorter one lets the message become visible while a receive
   * of this process is still in flight (a long poll outlives a short drain); taken again
   * just before exit, its pop dies with the process and the broker keeps the message
   * invisible for its default (60 s) instead of the next dispatcher serving it.
   */
  readonly handBackMs?: number;
}

export interface DrainOutcome {
  /** True when everything in flight finished within the drain time. */
  readonly drained: boolean;
  readonly elapsedMs: number;
}

export interface Drain {
  /** How long the caller may take, after `run` returns, to close its parts and exit. */
  readonly exitMs: number;
  /** Aborted once the drain time is over. */
  readonly overdue: AbortSignal;
  /** The handler as the queue should see it: after the drain time, every answer is a hand-back. */
  handler(inner: MessageHandler): MessageHandler;
  /** The upstream client as the dispatcher should see it: its calls are cut when the drain time is over. */
  upstream(inner: UpstreamClient): UpstreamClient;
  /**
   * Runs `stop` (resolving once the work in flight is done) for at most the drain
   * time, then cuts what is left and waits at most the grace time more.
   */
  run(stop: () => Promise<void>): Promise<DrainOutcome>;
}

export function createDrain(options: DrainOptions): Drain {
  const { clock, drainMs } = options;
  const graceMs = options.graceMs ?? DRAIN_GRACE_MS;
  const exitMs = options.exitMs ?? DRAIN_EXIT_MS;
  const handBackMs = options.handBackMs ?? graceMs + exitMs + 1_000;
  const overdue = new AbortController();
  const withSignal = (call: UpstreamCall): UpstreamCall => ({
    ...call,
    signal: call.signal ? AbortSignal.any([call.signal, overdue.signal]) : overdue.signal,
  });

  /** Resolves true if `work` settles within `ms`, false otherwise (work keeps running). */
  async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
    let cancel: (() => void) | undefined;
    const timeout = new Promise<false>((resolve) => (cancel = clock.setTimer(ms, () => resolve(false))));
    const done = work.then(
      () => true,
      () => true,
    );
    try {
      return await Promise.race([done, timeout]);
    } finally {
      cancel?.();
    }
  }

  return {
    exitMs,
    overdue: overdue.signal,
    handler: (inner) => async (message, worker) => {
      const result = await inner(message, worker);
      return overdue.signal.aborted && result.kind !== 'success' ? Consume.suspend(handBackMs) : result;
    },
    upstream: (inner) => ({
      call: (call) => inner.call(withSignal(call)),
      stream: (call, onData) => inner.stream(withSignal(call), onData),
      metrics: (baseUrl, timeoutMs) => inner.metrics(baseUrl, timeoutMs),
      close: () => inner.close(),
    }),
    async run(stop) {
      const startedAt = clock.now();
      const stopping = stop();
      const drained = await within(stopping, drainMs);
      if (!drained) {
        overdue.abort(new Error(`drain time of ${drainMs} ms is over`));
        await within(stopping, graceMs);
      }
      // Let handlers that just returned settle with the queue before the caller exits.
      await sleep(clock, 0);
      return { drained, elapsedMs: clock.now() - startedAt };
    },
  };
}
