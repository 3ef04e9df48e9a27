/**
 * What keeps a request's GPU call to one across redeliveries, restarts and
 * dispatchers (the dispatcher calls these hooks; the records live in an
 * AttemptStore, lib/store/attempts.ts):
 *
 * - a delivery whose request already has a final result is answered from it:
 *   acked, its reservoir place given back, no upstream call;
 * - the upstream call is claimed in the store first; a second delivery while the
 *   call runs waits, and a claim whose owner vanished mid-call is reported lost,
 *   never made again;
 * - failures are counted in the store, so maxAttempts holds whichever
 *   dispatcher, before or after a restart, saw the earlier ones;
 * - a result write that fails is retried with backoff; the upstream call is not.
 */
import { sleep, type Clock } from '../clock/clock.js';
import type { Envelope } from '../envelope.js';
import type { AttemptStore, Claim } from '../store/attempts.js';
import type { ResultChannel } from '../results/types.js';

export interface AttemptOptions {
  /** How long a call's claim holds before a silent owner is taken for dead. */
  readonly leaseMs: number;
  /** How long a record outlives its last change; past every redelivery of the request. */
  readonly ttlMs?: number;
  /** A result write is retried for this long before the delivery fails (default 5 min). */
  readonly writeGiveUpMs?: number;
}

export interface AttemptDeps {
  readonly clock: Clock;
  readonly store: AttemptStore;
  readonly results: ResultChannel;
  readonly newId: () => string;
  readonly log: { warn(fields: Record<string, unknown>, message: string): void };
}

const DEFAULT_TTL_MS = 60 * 60_000;
const DEFAULT_GIVE_UP_MS = 5 * 60_000;
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;

export type Before =
  /** `refusal`: the answer was a refusal the client may retry (why, as x-sluice-reason says it). */
  | { readonly kind: 'answered'; readonly refusal?: string }
  | { readonly kind: 'store-unavailable'; readonly error: unknown }
  | undefined;

export function createAttempts(deps: AttemptDeps, options: AttemptOptions) {
  const { clock, store, results, log } = deps;
  const ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  const writeGiveUpMs = options.writeGiveUpMs ?? DEFAULT_GIVE_UP_MS;

  return {
    /** Before anything else: is this request answered already? A store that cannot tell is reported, not thrown. */
    async before(envelope: Envelope): Promise<Before> {
      try {
        const result = await results.get(envelope.id);
        // A result from before this envelope was accepted answered an earlier life of it (a dead-letter redrive).
        if (!result || result.status === 'queued' || result.completedAt < envelope.enqueuedAt) return undefined;
        return result.refusal ? { kind: 'answered', refusal: result.refusal.reason } : { kind: 'answered' };
      } catch (error) {
        return { kind: 'store-unavailable', error };
      }
    },

    /** Claims the upstream call; `owner` ends it. */
    async claim(envelope: Envelope): Promise<{ readonly owner: string; readonly claim: Claim }> {
      const owner = deps.newId();
      return { owner, claim: await store.claim(envelope.id, owner, options.leaseMs, ttlMs) };
    },

    /** Ends a failed call; resolves with the request's failures so far, across dispatchers. */
    failed(envelope: Envelope, owner: string): Promise<number> {
      return store.end(envelope.id, owner, true, ttlMs);
    },

    persist: <T>(id: string, write: () => Promise<T>) =>
      persistResult({ clock, log, giveUpMs: writeGiveUpMs }, id, write),
  };
}

/** Runs a result write until it lands, backing off; throws only after `giveUpMs` (default 5 min). */
export async function persistResult<T>(
  deps: { readonly clock: Clock; readonly log: AttemptDeps['log']; readonly giveUpMs?: number },
  id: string,
  write: () => Promise<T>,
): Promise<T> {
  const { clock, log } = deps;
  const giveUpAt = clock.now() + (deps.giveUpMs ?? DEFAULT_GIVE_UP_MS);
  for (let wait = FIRST_RETRY_MS; ; wait = Math.min(MAX_RETRY_MS, wait * 2)) {
    try {
      return await write();
    } catch (error) {
      if (clock.now() + wait > giveUpAt) throw error;
      log.warn({ id, err: String(error), retryInMs: wait }, 'result write failed; retrying the write, not the call');
      await sleep(clock, wait);
    }
  }
}

export type Attempts = ReturnType<typeof createAttempts>;
