/**
 * What the edge puts in front of the shared (Redis) store:
 *
 * - a cache of known denials: a window seen refusing (or exhausted) stays
 *   refused in this process until it resets, with no round trip — a client
 *   hammering after its 429 costs a Map lookup, not a Redis call;
 * - a timeout on every call (default 250 ms: an admission must never hang a
 *   request for long);
 * - a breaker: after a failure the store is not asked again until a probe
 *   interval has passed, then one call probes it, and the first success closes
 *   the breaker — recovery needs nobody;
 * - per policy, while the store is unusable: fail open onto a conservative
 *   per-instance limiter (the embedded store with every limit scaled down), or
 *   fail closed by throwing StoreUnavailableError, which the edge answers with
 *   503 and Retry-After. Either way the caller never sees a raw store error.
 */
import { withTimeout as withClockTimeout, type Clock } from '../clock/clock.js';
import { alignedWindowStart } from '../limits/fixed-window.js';
import type { AggregateOps } from './aggregate.js';
import { createEmbeddedStore } from './embedded.js';
import type {
  AdmitDecision,
  AdmitInput,
  PaceInput,
  ReservoirPlace,
  RateStore,
  Reconciliation,
  SlotDecision,
  SlotRequest,
  Unit,
  WindowLimit,
  WindowState,
} from './types.js';

export type FailureMode = 'fail-open' | 'fail-closed';

/** Thrown in fail-closed mode while the shared store is unusable. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
  constructor(
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super('rate store unavailable', options);
  }
}

/** The subset of a pino logger this needs. */
export interface GuardLogger {
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
}

export interface GuardedStoreOptions {
  readonly primary: RateStore;
  readonly clock: Clock;
  readonly mode?: FailureMode;
  /** Per call; default 250 ms. */
  readonly timeoutMs?: number;
  /** How long after a failure the store is left alone before one probe; default 1000 ms. */
  readonly probeIntervalMs?: number;
  /**
   * Fail-open limits are this fraction of the shared ones (default 0.25): each
   * instance decides alone, so several instances together must not let a
   * flood through while Redis is away.
   */
  readonly fallbackLimitFactor?: number;
  /** Replaces the default fallback (the embedded store with scaled limits). */
  readonly fallback?: RateStore;
  /** Default true. */
  readonly denialCache?: boolean;
  /** Entries kept at most; default 10 000. */
  readonly denialCacheSize?: number;
  readonly log?: GuardLogger;
}

export interface GuardStats {
  readonly healthy: boolean;
  /** Calls answered by the shared store. */
  readonly primary: number;
  readonly failures: number;
  readonly timeouts: number;
  /** Calls answered by the fallback (fail-open) or refused with StoreUnavailableError (fail-closed). */
  readonly degraded: number;
  readonly cachedDenials: number;
}

export interface GuardedStore extends RateStore {
  stats(): GuardStats;
}

class TimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

interface KnownWindow {
  readonly scope: string;
  readonly unit: Unit;
  readonly limit: number;
  readonly windowMs: number;
  readonly windowStart: number;
  /** At most this much is left (other instances may have taken more since). */
  readonly remaining: number;
  /** Local clock time the window resets at. */
  readonly until: number;
}

/**
 * Known windows: entries only ever say "at most this much is left until then",
 * which stays true as other instances charge more, so a refusal from here is
 * one Redis would give too. Token refunds (reconcile) can make it stale, so
 * this process's refunds evict; other processes' refunds just wait out the window.
 */
export function createDenialCache(clock: Clock, maxEntries = 10_000) {
  const known = new Map<string, KnownWindow>();

  function remember(limits: readonly WindowLimit[], decision: AdmitDecision): void {
    const now = clock.now();
    decision.windows.forEach((w, i) => {
      const key = limits[i]?.key;
      if (key === undefined) return;
      const refusedHere =
        !decision.allowed &&
        'unit' in decision.deniedBy &&
        decision.deniedBy.scope === w.scope &&
        decision.deniedBy.unit === w.unit;
      if (!refusedHere && w.remaining > 0) return;
      known.set(key, {
        scope: w.scope,
        unit: w.unit,
        limit: w.limit,
        windowMs: w.windowMs,
        windowStart: w.windowStart,
        remaining: w.remaining,
        until: now + w.resetMs,
      });
    });
    if (known.size > maxEntries) evict(now);
  }

  function evict(now: number): void {
    for (const [key, w] of known) if (w.until <= now) known.delete(key);
    // Oldest first: Map iteration follows insertion order.
    for (const key of known.keys()) {
      if (known.size <= maxEntries) break;
      known.delete(key);
    }
  }

  /** A refusal if some limit is known not to fit, else undefined (ask the store). */
  function check(input: AdmitInput): AdmitDecision | undefined {
    const now = clock.now();
    let denied: WindowLimit | undefined;
    let retryAfterMs = 0;
    for (const l of input.limits) {
      const w = known.get(l.key);
      if (!w) continue;
      if (w.until <= now) {
        known.delete(l.key);
        continue;
      }
      // A policy change since moves the limit; what was used stays used.
      const left = w.remaining + (l.limit - w.limit);
      if (l.cost > left) {
        denied ??= l;
        retryAfterMs = Math.max(retryAfterMs, w.until - now);
      }
    }
    if (!denied) return undefined;
    const windows: WindowState[] = input.limits.map((l) => {
      const w = known.get(l.key);
      if (w)
        return {
          scope: l.scope,
          unit: l.unit,
          limit: l.limit,
          windowMs: l.windowMs,
          remaining: Math.max(0, w.remaining + (l.limit - w.limit)),
          windowStart: w.windowStart,
          resetMs: w.until - now,
        };
      // Not known here: report the window as the local clock sees it.
      const windowStart = alignedWindowStart(now, l.windowMs);
      return {
        scope: l.scope,
        unit: l.unit,
        limit: l.limit,
        windowMs: l.windowMs,
        remaining: l.limit,
        windowStart,
        resetMs: windowStart + l.windowMs - now,
      };
    });
    return { allowed: false, windows, deniedBy: { scope: denied.scope, unit: denied.unit }, retryAfterMs, queued: 0 };
  }

  function refunded(items: readonly Reconciliation[]): void {
    for (const item of items) if (item.delta < 0) known.delete(item.key);
  }

  return {
    remember,
    check,
    refunded,
    get size() {
      return known.size;
    },
  };
}

export function createGuardedStore(options: GuardedStoreOptions): GuardedStore {
  const { primary, clock } = options;
  const mode = options.mode ?? 'fail-open';
  const timeoutMs = options.timeoutMs ?? 250;
  const probeIntervalMs = options.probeIntervalMs ?? 1000;
  const factor = options.fallbackLimitFactor ?? 0.25;
  const fallback = options.fallback ?? createEmbeddedStore(clock);
  const denials = options.denialCache === false ? undefined : createDenialCache(clock, options.denialCacheSize);
  const log = options.log;

  let healthy = true;
  let downSince = 0;
  let retryAt = 0;
  let probing = false;
  const counts = { primary: 0, failures: 0, timeouts: 0, degraded: 0, cachedDenials: 0 };

  function withTimeout<T>(promise: Promise<T>): Promise<T> {
    return withClockTimeout(
      clock,
      promise,
      timeoutMs,
      () => new TimeoutError(`rate store did not answer within ${timeoutMs} ms`),
    );
  }

  /** Runs `op` on the shared store unless the breaker is open; `undefined` means "degrade". */
  async function attempt<T>(name: string, op: () => Promise<T>): Promise<{ value: T } | undefined> {
    const probe = !healthy;
    if (probe) {
      if (probing || clock.now() < retryAt) return undefined;
      probing = true;
    }
    try {
      const value = await withTimeout(op());
      counts.primary++;
      if (!healthy) {
        healthy = true;
        log?.info({ op: name, downMs: clock.now() - downSince, degraded: counts.degraded }, 'rate store recovered');
      }
      return { value };
    } catch (error) {
      counts.failures++;
      if (error instanceof TimeoutError) counts.timeouts++;
      const now = clock.now();
      if (healthy) {
        healthy = false;
        downSince = now;
        log?.warn({ op: name, err: String(error), mode }, 'rate store unusable; degrading');
      }
      retryAt = now + probeIntervalMs;
      return undefined;
    } finally {
      if (probe) probing = false;
    }
  }

  function unavailable(): StoreUnavailableError {
    counts.degraded++;
    return new StoreUnavailableError(Math.max(probeIntervalMs, retryAt - clock.now()));
  }

  function scaled(l: WindowLimit): WindowLimit {
    return { ...l, limit: Math.max(1, Math.floor(l.limit * factor)) };
  }

  return {
    async admit(input: AdmitInput): Promise<AdmitDecision> {
      const cached = denials?.check(input);
      if (cached) {
        counts.cachedDenials++;
        return cached;
      }
      const result = await attempt('admit', () => primary.admit(input));
      if (result) {
        denials?.remember(input.limits, result.value);
        return result.value;
      }
      if (mode === 'fail-closed') throw unavailable();
      counts.degraded++;
      // The reservoir count lives in the shared store and is decremented by
      // dispatchers elsewhere; a local copy would only ever fill up.
      return fallback.admit({ limits: input.limits.map(scaled) });
    },

    async reconcile(items: readonly Reconciliation[]): Promise<void> {
      denials?.refunded(items);
      await fallback.reconcile(items);
      // Best effort: a lost correction only skews one window.
      await attempt('reconcile', () => primary.reconcile(items));
    },

    async leaveReservoir(key: string): Promise<void> {
      await attempt('leaveReservoir', () => primary.leaveReservoir(key));
    },

    // Only the shared store holds reservoirs; unanswered, the LiteTopic reads as empty (nothing refused for it).
    async reservoirDepth(key: string): Promise<number> {
      const result = await attempt('reservoirDepth', () => primary.reservoirDepth(key));
      return result ? result.value : 0;
    },

    async reservoirPlaces(key: string, limit: number): Promise<readonly ReservoirPlace[]> {
      const result = await attempt('reservoirPlaces', () => primary.reservoirPlaces(key, limit));
      return result ? result.value : [];
    },

    // Unanswered, nothing is shed: the dispatcher judges each request as it surfaces.
    async shedReservoir(key: string, members: readonly string[]): Promise<readonly string[]> {
      const result = await attempt('shedReservoir', () => primary.shedReservoir(key, members));
      return result ? result.value : [];
    },

    async pace(input: PaceInput): Promise<number> {
      const result = await attempt('pace', () => primary.pace(input));
      if (result) return result.value;
      if (mode === 'fail-closed') throw unavailable();
      counts.degraded++;
      return fallback.pace({ ...input, rate: input.rate * factor });
    },

    async paceReserving(input) {
      const result = await attempt('paceReserving', () => primary.paceReserving(input));
      if (result) return result.value;
      if (mode === 'fail-closed') throw unavailable();
      counts.degraded++;
      return fallback.paceReserving({ ...input, rate: input.rate * factor });
    },

    async acquireSlot(request: SlotRequest): Promise<SlotDecision> {
      const result = await attempt('acquireSlot', () => primary.acquireSlot(request));
      if (result) return result.value;
      // A call that timed out may still have taken the lease in the shared store. Unless the
      // fallback grants it (its release then gives back both), give it back now rather than
      // leave a slot taken until the lease expires.
      const giveBack = () => void primary.releaseSlot(request.key, request.leaseId).catch(() => {});
      if (mode === 'fail-closed') {
        giveBack();
        throw unavailable();
      }
      counts.degraded++;
      const decision = await fallback.acquireSlot({
        ...request,
        capacity: Math.max(1, Math.floor(request.capacity * factor)),
      });
      if (!decision.granted) giveBack();
      return decision;
    },

    async releaseSlot(key: string, leaseId: string): Promise<void> {
      await fallback.releaseSlot(key, leaseId);
      await attempt('releaseSlot', () => primary.releaseSlot(key, leaseId));
    },

    // A return time only spaces redeliveries, never a limit: this instance's own view serves
    // while the store does not answer, fail-closed or not.
    async sendBack(input) {
      const result = await attempt('sendBack', () => primary.sendBack(input));
      return result ? result.value : fallback.sendBack(input);
    },

    watchSlots(key: string, onRelease: () => void): () => void {
      const stops = [primary.watchSlots(key, onRelease), fallback.watchSlots(key, onRelease)];
      return () => stops.forEach((stop) => stop());
    },

    // The shared view while the store answers; this instance's own view (the fallback's) while it does not.
    ...guardedAggregate(primary, fallback, attempt),

    async close(): Promise<void> {
      await Promise.allSettled([primary.close(), fallback.close()]);
    },

    stats: () => ({ healthy, ...counts }),
  };
}

type Attempt = <T>(name: string, op: () => Promise<T>) => Promise<{ value: T } | undefined>;

/** Aggregate calls never fail the caller: what the shared store cannot take goes to the fallback. */
function guardedAggregate(primary: AggregateOps, fallback: AggregateOps, attempt: Attempt): AggregateOps {
  const either =
    <A extends unknown[], T>(name: keyof AggregateOps, run: (s: AggregateOps, ...args: A) => Promise<T>) =>
    async (...args: A): Promise<T> => {
      const result = await attempt(name, () => run(primary, ...args));
      return result ? result.value : run(fallback, ...args);
    };
  return {
    addCounts: either('addCounts', (s, adds: Parameters<AggregateOps['addCounts']>[0]) => s.addCounts(adds)),
    readCounts: either('readCounts', (s, keys: readonly string[]) => s.readCounts(keys)),
    putMember: either('putMember', (s, index: string, id: string, value: string, ttlMs: number, max: number) =>
      s.putMember(index, id, value, ttlMs, max),
    ),
    readMembers: either('readMembers', (s, index: string, ttlMs: number) => s.readMembers(index, ttlMs)),
    appendLines: either('appendLines', (s, adds: Parameters<AggregateOps['appendLines']>[0]) => s.appendLines(adds)),
    readLines: either('readLines', (s, keys: readonly string[], field: string) => s.readLines(keys, field)),
  };
}
