/**
 * The in-process RateStore: the same algorithms as the Redis scripts, over Maps.
 * Right for one process (`npm start`, the scenario lab); state is not shared.
 */
import type { Clock } from '../clock/clock.js';
import { charge, checkWindows, reconcileWindow, type WindowCounter } from '../limits/fixed-window.js';
import { pace } from '../limits/gcra.js';
import { sendBack } from '../limits/send-back.js';
import { DEFAULT_RECLAIM_MS, slotAsk, takeSlot, type ReclaimMarks, type SlotClaims } from '../limits/capacity-gate.js';
import { bare } from '../lookup.js';
import { createEmbeddedAggregate } from './embedded-aggregate.js';
import { parseReservoirPlace } from './keys.js';
import type {
  AdmitDecision,
  AdmitInput,
  PaceInput,
  ReservoirPlace,
  RateStore,
  Reconciliation,
  SlotDecision,
  SlotRequest,
  WindowState,
} from './types.js';

interface Lease {
  readonly tier: string;
  readonly expiresAt: number;
  /** When its call is expected to end (Infinity: not known). */
  readonly endsAt: number;
}

/** A full reservoir frees a place when a request leaves or its place lapses; worth retrying after this long. */
const RESERVOIR_RETRY_MS = 1000;
/** How many admissions between sweeps of windows that have ended. */
const SWEEP_EVERY = 4096;

export function createEmbeddedStore(clock: Clock): RateStore {
  const windows = new Map<string, WindowCounter & { readonly endsAt: number }>();
  /** Per reservoir: member → when its place lapses. */
  const reservoirs = new Map<string, Map<string, number>>();
  const tats = new Map<string, number>();
  const gates = new Map<string, Map<string, Lease>>();
  const reclaims = new Map<string, ReclaimMarks>();
  const claims = new Map<string, SlotClaims>();
  const watchers = new Map<string, Set<() => void>>();
  /** Per LiteTopic: when it returns from its send-back; per tier × model: its schedule's next place. */
  const returns = new Map<string, number>();
  let admissions = 0;
  let sendBacks = 0;

  function sweepWindows(now: number): void {
    for (const [key, w] of windows) if (w.endsAt <= now) windows.delete(key);
    // A TAT in the past says no more than an absent one.
    for (const [key, tat] of tats) if (tat <= now) tats.delete(key);
    for (const [key, at] of returns) if (at <= now) returns.delete(key);
    for (const key of reservoirs.keys()) placesOf(key, now);
  }

  /** The live places of a reservoir; lapsed ones are dropped, and an empty reservoir with them. */
  function placesOf(key: string, now: number): Map<string, number> {
    const places = reservoirs.get(key) ?? new Map<string, number>();
    for (const [member, until] of places) if (until <= now) places.delete(member);
    if (places.size === 0) reservoirs.delete(key);
    return places;
  }

  function leasesOf(key: string, now: number): Map<string, Lease> {
    let leases = gates.get(key);
    if (!leases) gates.set(key, (leases = new Map()));
    for (const [id, lease] of leases) if (lease.expiresAt <= now) leases.delete(id);
    return leases;
  }

  function countByTier(leases: Map<string, Lease>): Record<string, number> {
    // Counted on a record without a prototype: a tier is whatever the asker names (the policy refuses
    // `constructor` and the like, but a message's envelope is not the policy).
    const inUse = bare<number>({});
    for (const lease of leases.values()) inUse[lease.tier] = (inUse[lease.tier] ?? 0) + 1;
    return inUse;
  }

  return {
    async admit(input: AdmitInput): Promise<AdmitDecision> {
      const now = clock.now();
      if (++admissions % SWEEP_EVERY === 0) sweepWindows(now);
      const decision = checkWindows(
        input.limits,
        input.limits.map((l) => windows.get(l.key)),
        now,
      );
      const places = input.reservoir ? placesOf(input.reservoir.key, now) : undefined;
      const queued = places?.size ?? 0;
      const reservoirFull = input.reservoir !== undefined && queued >= input.reservoir.max;
      const allowed = decision.allowed && !reservoirFull;
      const states: WindowState[] = input.limits.map((l, i) => {
        const c = decision.checks[i]!;
        return {
          scope: l.scope,
          unit: l.unit,
          limit: l.limit,
          windowMs: l.windowMs,
          remaining: Math.max(0, l.limit - c.used - (allowed ? l.cost : 0)),
          windowStart: c.windowStart,
          resetMs: c.resetMs,
        };
      });
      if (!allowed) {
        const denied = input.limits[decision.firstDenied];
        return {
          allowed: false,
          windows: states,
          deniedBy: denied ? { scope: denied.scope, unit: denied.unit } : { scope: 'reservoir' },
          retryAfterMs: denied ? decision.retryAfterMs : RESERVOIR_RETRY_MS,
          queued,
        };
      }
      input.limits.forEach((l, i) => {
        const check = decision.checks[i]!;
        windows.set(l.key, { ...charge(check, l.cost), endsAt: check.windowStart + l.windowMs });
      });
      if (input.reservoir && places) {
        places.set(input.reservoir.member, now + input.reservoir.holdMs);
        reservoirs.set(input.reservoir.key, places);
      }
      return { allowed: true, windows: states, queued: places?.size ?? 0 };
    },

    async reconcile(items: readonly Reconciliation[]): Promise<void> {
      for (const item of items) {
        const current = windows.get(item.key);
        const next = reconcileWindow(current, item.windowStart, item.delta);
        if (current && next && next !== current) windows.set(item.key, { ...next, endsAt: current.endsAt });
      }
    },

    async leaveReservoir(place: string): Promise<void> {
      const at = parseReservoirPlace(place);
      if (!at) return;
      const places = reservoirs.get(at.key);
      places?.delete(at.member);
      if (places?.size === 0) reservoirs.delete(at.key);
    },

    // Read only, as in the Lua twin: live places are those that lapse after now.
    async reservoirDepth(key: string): Promise<number> {
      const now = clock.now();
      let n = 0;
      for (const until of reservoirs.get(key)?.values() ?? []) if (until > now) n++;
      return n;
    },

    // Read only, as in the Lua twin; ordered as Redis orders a sorted set: by score, ties by member.
    async reservoirPlaces(key: string, limit: number): Promise<readonly ReservoirPlace[]> {
      const now = clock.now();
      return [...(reservoirs.get(key) ?? [])]
        .filter(([, until]) => until > now)
        .sort(([a, x], [b, y]) => x - y || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, Math.max(0, limit))
        .map(([member, lapsesAt]) => ({ member, lapsesAt }));
    },

    async shedReservoir(key: string, members: readonly string[]): Promise<readonly string[]> {
      // As the Lua twin: no sweep, the members named are taken whether or not they lapsed.
      const places = reservoirs.get(key);
      if (!places) return [];
      const shed = members.filter((member) => places.delete(member));
      if (places.size === 0) reservoirs.delete(key);
      return shed;
    },

    async pace(input: PaceInput): Promise<number> {
      const now = clock.now();
      const decision = pace(input, tats.get(input.key), now);
      if (decision.tat !== undefined) tats.set(input.key, decision.tat);
      return decision.waitMs;
    },

    async paceReserving(input) {
      const decision = pace(input, tats.get(input.key), clock.now(), input.reserveUpToMs);
      if (decision.tat !== undefined) tats.set(input.key, decision.tat);
      return { waitMs: decision.waitMs, reserved: decision.reserved };
    },

    async acquireSlot(request: SlotRequest): Promise<SlotDecision> {
      const now = clock.now();
      const leases = leasesOf(request.key, now);
      const inUse = countByTier(leases);
      const marks = reclaims.get(request.key) ?? {};
      const decision = takeSlot(request, inUse, request.tier, marks, now, request.reclaimMs ?? DEFAULT_RECLAIM_MS, {
        moreWaiting: request.moreWaiting ?? true,
        ask: slotAsk(request),
        claims: claims.get(request.key),
        // Read only by a keep that depends on them, as in the Lua twin.
        endsInMs: request.releasesNear === undefined ? [] : [...leases.values()].map((l) => l.endsAt - now),
        yieldTo: request.yieldTo,
      });
      if (Object.keys(decision.marks).length > 0) reclaims.set(request.key, decision.marks);
      else reclaims.delete(request.key);
      if (Object.keys(decision.claims).length > 0) claims.set(request.key, decision.claims);
      else claims.delete(request.key);
      if (!decision.granted) {
        const nextExpiry = Math.min(...[...leases.values()].map((l) => l.expiresAt));
        // Slots usually free when a request finishes; the lease expiry is only the worst case.
        return { granted: false, inUse, retryAfterMs: Math.max(1, Math.min(nextExpiry - now, 100)) };
      }
      leases.set(request.leaseId, {
        tier: request.tier,
        expiresAt: now + request.leaseMs,
        endsAt: now + (request.expectedMs ?? Infinity),
      });
      inUse[request.tier] = (inUse[request.tier] ?? 0) + 1;
      return { granted: true, inUse };
    },

    async releaseSlot(key: string, leaseId: string): Promise<void> {
      if (!gates.get(key)?.delete(leaseId)) return;
      // Told after the caller's await, as a shared store's notice would arrive.
      for (const listener of watchers.get(key) ?? []) queueMicrotask(listener);
    },

    async sendBack(input) {
      const now = clock.now();
      // A dispatcher admits nothing: its send-backs sweep too.
      if (++sendBacks % SWEEP_EVERY === 0) sweepWindows(now);
      const decision = sendBack(
        input,
        { pendingAt: returns.get(input.key), nextAt: returns.get(input.scheduleKey) },
        now,
      );
      if (decision.pendingAt !== undefined) returns.set(input.key, decision.pendingAt);
      if (decision.nextAt !== undefined) returns.set(input.scheduleKey, decision.nextAt);
      return decision.ms;
    },

    watchSlots(key: string, onRelease: () => void): () => void {
      let set = watchers.get(key);
      if (!set) watchers.set(key, (set = new Set()));
      const listener = () => onRelease();
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0) watchers.delete(key);
      };
    },

    ...createEmbeddedAggregate(clock),
    async close(): Promise<void> {},
  };
}
