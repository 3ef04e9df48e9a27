/**
 * RateStore: the narrow interface every shared-state algorithm sits behind.
 * Three implementations give the same decisions on the same inputs: embedded
 * (in-memory, one process), Redis over TCP (containers) and Redis over Upstash
 * REST (the edge). The Redis ones run the Lua twins of lib/limits, one script
 * call per operation, with time taken from Redis TIME.
 */

import type { AggregateOps } from './aggregate.js';
import type { GateSpec } from '../limits/capacity-gate.js';
import type { SendBackSpec } from '../limits/send-back.js';

export type Unit = 'requests' | 'tokens';

/** One fixed window to check and charge. Keys come from lib/store/keys.ts only. */
export interface WindowLimit {
  readonly key: string;
  /** Names the limit in reasons and headers, e.g. "account-model". */
  readonly scope: string;
  readonly unit: Unit;
  readonly limit: number;
  readonly windowMs: number;
  /** Units this request charges: 1 for requests, the token estimate for tokens. */
  readonly cost: number;
}

export interface ReservoirLimit {
  readonly key: string;
  /** Most requests waiting in the LiteTopic; admission takes one place. */
  readonly max: number;
  /** Names this request's place (its request id); admitting the same member twice holds one place. */
  readonly member: string;
  /**
   * The place lapses this long after admission (the request's deadline), so a
   * release lost to an outage or a crash frees it anyway: at rest the reservoir is empty.
   */
  readonly holdMs: number;
}

/** A request waiting in a LiteTopic, as its reservoir holds it. */
export interface ReservoirPlace {
  readonly member: string;
  /** When the place lapses: its request's deadline. */
  readonly lapsesAt: number;
}

export interface AdmitInput {
  readonly limits: readonly WindowLimit[];
  readonly reservoir?: ReservoirLimit;
}

export interface WindowState {
  readonly scope: string;
  readonly unit: Unit;
  readonly limit: number;
  readonly windowMs: number;
  /** After this request's charge when admitted; unchanged when refused. */
  readonly remaining: number;
  /** Start of the clock-aligned window, ms since epoch; reconciliation needs it. */
  readonly windowStart: number;
  /** Milliseconds until the window resets. */
  readonly resetMs: number;
}

export type AdmitDecision =
  | { readonly allowed: true; readonly windows: readonly WindowState[]; readonly queued: number }
  | {
      readonly allowed: false;
      readonly windows: readonly WindowState[];
      /** The first limit that refused: a window scope, or "reservoir". */
      readonly deniedBy: { readonly scope: string; readonly unit: Unit } | { readonly scope: 'reservoir' };
      readonly retryAfterMs: number;
      readonly queued: number;
    };

export interface Reconciliation {
  readonly key: string;
  readonly windowStart: number;
  /** Actual minus charged; negative gives units back. */
  readonly delta: number;
}

export interface PaceInput {
  readonly key: string;
  /** Releases per second. */
  readonly rate: number;
  /** Releases allowed back to back (1 = strict leaky bucket). */
  readonly burst: number;
  /** Book the next slot when it is at most this far away (see lib/limits/gcra.ts). */
  readonly reserveUpToMs?: number;
}

export interface PaceOutcome {
  /** 0: release now. Otherwise the wait, either booked (`reserved`) or just advice. */
  readonly waitMs: number;
  readonly reserved: boolean;
}

/** A message sent back from a full room to its LiteTopic (lib/limits/send-back.ts). */
export interface SendBackInput extends SendBackSpec {
  /** The physical LiteTopic's return (lib/store/keys.ts: liteTopicReturnKey). */
  readonly key: string;
  /** Its tier's return schedule on the model (lib/store/keys.ts: returnScheduleKey). */
  readonly scheduleKey: string;
}

/** The model's gate (its slots and each tier's share) and the ask. */
export interface SlotRequest extends GateSpec {
  /** Key of the model's gate (lib/store/keys.ts). */
  readonly key: string;
  readonly tier: string;
  readonly leaseId: string;
  /** A lease not released by then is reclaimed, so a crashed dispatcher frees its slots. */
  readonly leaseMs: number;
  /**
   * How long a tier refused below its reservation keeps others from borrowing its
   * idle part; must outlast its retry interval. Default and why: DEFAULT_RECLAIM_MS
   * in lib/limits/capacity-gate.ts.
   */
  readonly reclaimMs?: number;
  /**
   * Whether the asker holds more requests of this tier waiting after this one
   * (default true). A grant with none left clears the tier's reclaim mark, so
   * its idle share is lent again at once instead of when the mark lapses.
   */
  readonly moreWaiting?: boolean;
  /**
   * Who asks (a dispatcher's id) and the deadline of the waiter it asks for. A refused
   * asker claims the tier, so another asker with a later deadline does not take the last
   * slot it could have had (takeSlot's claims in lib/limits/capacity-gate.ts). Without
   * them the ask claims nothing and yields to any claim.
   */
  readonly asker?: string;
  readonly deadline?: number;
  /** How long the call is expected to hold the slot; unknown, it never counts as ending soon. */
  readonly expectedMs?: number;
  /**
   * Heavier tiers this ask yields to (tier-order.ts): while one of them has a claim (a waiter
   * refused by a full room, in any dispatcher) and could take the slot, the ask is refused
   * and the slot stays for it. A slot the heavier tier could not take still goes to the ask.
   */
  readonly yieldTo?: readonly string[];
}

export type SlotDecision =
  | { readonly granted: true; readonly inUse: Readonly<Record<string, number>> }
  | { readonly granted: false; readonly inUse: Readonly<Record<string, number>>; readonly retryAfterMs: number };

/** The aggregate operations (lib/store/aggregate.ts) back the deployment-wide dashboard and traces. */
export interface RateStore extends AggregateOps {
  /** Checks every window and the reservoir, then charges all of them, or none. */
  admit(input: AdmitInput): Promise<AdmitDecision>;
  /** Corrects token charges once the real usage is known; a window that has rolled over is left alone. */
  reconcile(items: readonly Reconciliation[]): Promise<void>;
  /**
   * Gives back the reservoir place taken at admission (request done, expired or
   * dead-lettered): `place` is `reservoirPlace(key, member)` (lib/store/keys.ts).
   * Leaving twice, or after the place lapsed, changes nothing.
   */
  leaveReservoir(place: string): Promise<void>;
  /** The live places of a reservoir (`reservoirKey`): what its LiteTopic holds now. Reads only. */
  reservoirDepth(key: string): Promise<number>;
  /** The live places of a reservoir, those to lapse first first (ties by member), at most `limit`. Reads only. */
  reservoirPlaces(key: string, limit: number): Promise<readonly ReservoirPlace[]>;
  /**
   * Takes these members' places from a reservoir: requests already admitted that their flow's
   * fair share cannot start in time (lib/limits/fair-share.ts latePlaces). Returns those it
   * took, in the order given: a place is taken, and its request answered, by one caller only.
   */
  shedReservoir(key: string, members: readonly string[]): Promise<readonly string[]>;
  /** GCRA: 0 when the release may happen now (and records it), else ms to wait (records nothing). */
  pace(input: PaceInput): Promise<number>;
  /** GCRA that books a slot up to `reserveUpToMs` ahead; a booked wait needs no second call. */
  paceReserving(input: PaceInput & { readonly reserveUpToMs: number }): Promise<PaceOutcome>;
  acquireSlot(request: SlotRequest): Promise<SlotDecision>;
  /** Gives a slot back and tells every watcher of the gate, in any process sharing the store. */
  releaseSlot(key: string, leaseId: string): Promise<void>;
  /**
   * Calls `onRelease` when a slot of the gate is released, so a dispatcher with
   * waiting requests asks again then instead of polling. A store that cannot
   * notify (Upstash REST has no subscriptions) never calls it: its waiters fall
   * back to their bounded keep-alive. Returns a function that stops watching.
   */
  watchSlots(key: string, onRelease: () => void): () => void;
  /**
   * When a message sent back from a full room returns, in ms from now: with its LiteTopic's
   * pending return when there is one at least `minMs` away, else after `ms`, which becomes
   * the LiteTopic's pending return (lib/limits/send-back.ts).
   */
  sendBack(input: SendBackInput): Promise<number>;
  close(): Promise<void>;
}
