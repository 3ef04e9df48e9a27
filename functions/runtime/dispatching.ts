/**
 * The dispatcher loop on a process's parts: one wiring for the deployed
 * dispatcher (functions/dispatcher/main.ts) and for `npm start`
 * (functions/local/sluice.ts), so both consume the same way.
 */
import type { Clock } from '../../lib/clock/clock.js';
import { createDispatcher, settleDeadLetter, type DispatcherOptions } from '../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../lib/dispatch-events.js';
import type { DeadLetter, MessageHandler, Subscription } from '../../lib/queue/types.js';
import type { Logger } from '../../lib/telemetry/log.js';
import type { UpstreamClient } from '../../lib/upstream/client.js';
import { newLeaseId } from './ids.js';
import type { Parts } from './parts.js';

export interface DispatchingOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly upstream: UpstreamClient;
  /** Concurrent deliveries: requests at the GPU plus those waiting here for a slot. */
  readonly concurrency: number;
  readonly onEvent?: (event: DispatchEvent) => void;
  readonly options?: DispatcherOptions;
  /** What the queue sees instead of the handler itself (the bounded stop's wrapper, lib/dispatch/drain.ts). */
  readonly wrap?: (handler: MessageHandler) => MessageHandler;
}

export interface Dispatching {
  readonly subscription: Subscription;
  /** For the engine's own dead letters (createParts' settleDeadLetter): the client still gets an answer. */
  settle(deadLetter: DeadLetter): Promise<void>;
}

export function startDispatching(parts: Parts, o: DispatchingOptions): Dispatching {
  const deps = {
    clock: o.clock,
    store: parts.store,
    attempts: parts.attempts,
    results: parts.results,
    upstream: o.upstream,
    policy: parts.policy,
    log: o.log,
    newId: newLeaseId,
    deadLetters: parts.deadLetters,
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    options: {
      ...o.options,
      // Half the deliveries may wait for a slot, fewer as calls take workers (half of them at most); the rest keep
      // taking messages, so a heavier tier's request still reaches the scheduler when the lighter ones wait.
      flow: { maxWaiting: Math.max(1, Math.floor(o.concurrency / 2)), workers: o.concurrency, ...o.options?.flow },
    },
  };
  const handler = createDispatcher(deps);
  const subscription = parts.queue.subscribe(o.wrap ? o.wrap(handler) : handler, { concurrency: o.concurrency });
  return { subscription, settle: (d) => settleDeadLetter(deps, d) };
}
