/**
 * Attempt records: per request id, in the shared store, which upstream call is
 * running (an owner and a lease), how many calls began and how many failed. They
 * make a request's GPU call happen once across redeliveries, restarts and
 * dispatchers: a second delivery finds the running call and waits, a call whose
 * owner vanished (lease lapsed, no end) is known to be lost instead of being
 * silently made again, and failures count toward maxAttempts wherever they happened.
 * One TypeScript rule (here, over a Map) and its Lua twin (lib/store/redis/attempts.ts).
 */
import type { Clock } from '../clock/clock.js';

export type Claim =
  /** This caller may make the call; `calls` counts it. */
  | { readonly state: 'granted'; readonly calls: number; readonly failures: number }
  /** Another owner's call is running; ask again within `retryAfterMs`. */
  | { readonly state: 'busy'; readonly retryAfterMs: number; readonly calls: number; readonly failures: number }
  /**
   * A call began and its owner never ended it before its lease lapsed (a crash
   * mid-call): counted as a failure, and nothing is granted, so the caller decides.
   */
  | { readonly state: 'lost'; readonly calls: number; readonly failures: number };

export interface AttemptStore {
  /** Claims the upstream call of request `id` for `owner` for `leaseMs`; the record lives `ttlMs`. */
  claim(id: string, owner: string, leaseMs: number, ttlMs: number): Promise<Claim>;
  /** Ends `owner`'s call; a failed one counts. Resolves with the failures counted so far. */
  end(id: string, owner: string, failed: boolean, ttlMs: number): Promise<number>;
  close(): Promise<void>;
}

interface AttemptRecord {
  owner?: string;
  until: number;
  calls: number;
  failures: number;
  expiresAt: number;
}

/** How many claims between sweeps of records past their TTL. */
const SWEEP_EVERY = 4096;

/** The rule both twins follow, on one record (undefined: none yet). */
export function claimRecord(
  record: AttemptRecord | undefined,
  owner: string,
  now: number,
  leaseMs: number,
  ttlMs: number,
): [Claim, AttemptRecord] {
  const r: AttemptRecord =
    record && record.expiresAt > now ? { ...record } : { until: 0, calls: 0, failures: 0, expiresAt: 0 };
  r.expiresAt = now + ttlMs;
  if (r.owner !== undefined) {
    if (r.until > now) return [{ state: 'busy', retryAfterMs: r.until - now, calls: r.calls, failures: r.failures }, r];
    r.owner = undefined;
    r.until = 0;
    r.failures++;
    return [{ state: 'lost', calls: r.calls, failures: r.failures }, r];
  }
  r.owner = owner;
  r.until = now + leaseMs;
  r.calls++;
  return [{ state: 'granted', calls: r.calls, failures: r.failures }, r];
}

export function endRecord(
  record: AttemptRecord | undefined,
  owner: string,
  failed: boolean,
  now: number,
  ttlMs: number,
): AttemptRecord {
  const r: AttemptRecord =
    record && record.expiresAt > now ? { ...record } : { until: 0, calls: 0, failures: 0, expiresAt: 0 };
  r.expiresAt = now + ttlMs;
  // A call that outlived its lease and was declared lost has been counted already.
  if (r.owner !== owner) return r;
  r.owner = undefined;
  r.until = 0;
  if (failed) r.failures++;
  return r;
}

export function createEmbeddedAttempts(clock: Clock): AttemptStore {
  const records = new Map<string, AttemptRecord>();
  let claims = 0;
  return {
    async claim(id, owner, leaseMs, ttlMs) {
      const now = clock.now();
      if (++claims % SWEEP_EVERY === 0) for (const [k, r] of records) if (r.expiresAt <= now) records.delete(k);
      const [claim, next] = claimRecord(records.get(id), owner, now, leaseMs, ttlMs);
      records.set(id, next);
      return claim;
    },
    async end(id, owner, failed, ttlMs) {
      const next = endRecord(records.get(id), owner, failed, clock.now(), ttlMs);
      records.set(id, next);
      return next.failures;
    },
    async close() {},
  };
}
