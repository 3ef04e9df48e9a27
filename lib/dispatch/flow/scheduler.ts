/**
 * Flow control for GPU slots: a paced request waits here, its message un-acked,
 * until the model's shared gate grants it a slot. The steps are apart, as in
 * Kubernetes APF and llm-d flow control: classify (the envelope's tier, tenant
 * and account are its flow), enqueue in the flow (fair-queue.ts), pick the next
 * tier (tier-order.ts) and its least-served flow (among flows served alike, the
 * call whose expected end spreads the releases best: release-spread.ts), ask
 * the shared gate in the store for a slot (the TypeScript rule and its Lua twin,
 * one budget across dispatchers).
 *
 * No polling: the gate is asked again when a slot is released, by this
 * dispatcher (directly) or by another one (the store's release notice). While
 * requests wait on a full gate, a keep-alive asks again now and then, which
 * keeps a waiting tier's reclaim mark alive and covers leases that expire
 * instead of being released (a crashed dispatcher).
 *
 * Bounded: at most `maxWaiting` wait here, across the models this dispatcher serves, short pace
 * waits held here instead of a Suspend (pace-hold.ts, at most half of them) included. Past it a
 * newcomer whose model has a slot free and nothing waiting starts anyway (startsNow); one that
 * outranks a waiter (its model holds less than its share of the room; of its model, a heavier
 * tier; within its tier, an account with nothing waiting here, or a pressing deadline:
 * victimFor) takes its place and that one goes back to its LiteTopic with a Suspend; otherwise
 * the newcomer does. A request is held at most `holdMaxMs`
 * (DEFAULT_HOLD_MAX_MS), and one that cannot start before its deadline given the work
 * ahead of it is answered at once.
 */
import type { Clock } from '../../clock/clock.js';
import type { Model, Policy } from '../../policy/schema.js';
import { own } from '../../lookup.js';
import { endsNear, slotsInUse } from '../../limits/capacity-gate.js';
import { fairShareKey, liteTopicReturnKey, returnScheduleKey, slotGateKey } from '../../store/keys.js';
import {
  encodeReport,
  fairShare,
  FAIR_SHARE_TTL_MS,
  MAX_REPORTERS,
  latePlaces,
  SHED_CHECKS_PER_REPORT,
  SHED_READS_PER_RESERVOIR,
  type FairShare,
  type TierBacklog,
} from '../../limits/fair-share.js';
import { sendBack as sendBackRule } from '../../limits/send-back.js';
import type { Recall } from '../../queue/types.js';
import type { RateStore } from '../../store/types.js';
import { TierQueue, type FlowKey, type Waiter } from './fair-queue.js';
import { asBorrower, borrowSpec, modelGate, RELEASES_NEAR, type ModelGate } from './gate-spec.js';
import { DemandPeak } from './demand-peak.js';
import { FairShareReport } from './fair-share-report.js';
import { createPaceHold } from './pace-hold.js';
import { waitForRelease } from './release-spread.js';
import type { SlotSource } from './saturation.js';
import { SentBack } from './sent-back.js';
import { ServiceTime, type Tokens } from './service-time.js';
import { PRESSED_SHARE_OF_WAIT, tierOrder } from './tier-order.js';

export interface FlowControlOptions {
  /** Requests waiting for a slot in this dispatcher at most. */
  readonly maxWaiting?: number;
  /**
   * Deliveries the consumer runs at once (its concurrency). Set, the waiting room also
   * shrinks as this dispatcher's calls take workers, so a few workers always stay free
   * for newcomers (RESERVED_WORKERS): when calls and waiters held every worker, a
   * heavier tier's request was not even delivered while lighter ones came in. Calls hold
   * at most half the workers (CALLS_HOLD_WORKERS); past that a call gives its worker back.
   */
  readonly workers?: number;
  /** Longest one delivery is held here before it goes back to its LiteTopic (DEFAULT_HOLD_MAX_MS). */
  readonly holdMaxMs?: number;
  /** While requests wait on a full gate, ask again this often; below the gate's reclaim mark. */
  readonly keepaliveMs?: number;
  readonly leaseMs: number;
  /** Shortest Suspend the broker takes. */
  readonly minSuspendMs: number;
  /** A tier that asked for a slot within this long keeps its headroom (gate-spec.ts). */
  readonly activeWithinMs?: number;
  /** Pace waits up to this long are held here rather than Suspended, while there is room (pace-hold.ts). */
  readonly maxPaceHoldMs?: number;
  /** Longest a request sent back from a full room stays away (DEFAULT_MAX_SEND_BACK_MS). */
  readonly maxSendBackMs?: number;
}

/**
 * Pace waits held by default. Short enough that a held message keeps its worker no
 * longer than a Suspend's redelivery round trip through a broker would take anyway.
 */
export const DEFAULT_MAX_PACE_HOLD_MS = 1_000;

/**
 * Starts between two returns of a tier's sent-back requests. A LiteTopic that returns
 * from a send-back gives its next messages at once to the free workers (nothing else is
 * ready while the others are away), and its next but one is refused again: spaced by one
 * start, each return bought one place for one refusal (about two deliveries per request
 * under overload); spaced by several, the places freed meanwhile take several of its
 * messages for the one refused after them.
 */
export const PLACES_PER_RETURN = 3;

/**
 * A request sent back when the room cannot start it before its deadline is answered late only
 * while more than this share of its tier's maximum wait is left: closer to its deadline, a
 * Suspend until then costs its client little and keeps its chance of a recall.
 */
export const LATE_WORTH_SHARE_OF_WAIT = 0.1;

/**
 * A request sent back from a full room returns within this long at the latest. Its time away is
 * estimated from the work ahead of it at today's pace, and the heavier tiers' demand can end well
 * before that work would have: their slots then free all at once. The room calls its sent-back
 * requests back when it empties (sent-back.ts), so the bound is for what that cannot see: a room
 * that never empties while the slots go to other dispatchers' requests. Each return to a full room
 * is one more delivery, so not short: at 60 s, the 64-slot replay of a 30,000-request trace
 * (`npm run bench -- replay`) made 3.2 deliveries per request, at 120 s 2.3, with the GPU as busy.
 */
export const DEFAULT_MAX_SEND_BACK_MS = 120_000;

/**
 * A request waits here this long at most, then goes back to its LiteTopic for the shortest
 * Suspend and is delivered again: one more delivery. Batch's whole maximum wait, so a batch
 * request waits out its life here; the wait and the call after it stay inside the longest a
 * message may be in hand (MAX_IN_HAND_MS, lib/queue/in-hand.ts), which both queues keep
 * invisible. At 40 s (when the broker's own renewal was thought to keep held messages), each
 * hold's end was one more delivery, and on long overloads (`npm run bench -- replay` of the
 * long-prompt trace) more than two per completed request (the commit that lengthened it).
 */
export const DEFAULT_HOLD_MAX_MS = 5 * 60_000;

/** Workers kept free for newcomers, as a share of `workers` (at least one). */
export const RESERVED_WORKERS = 1 / 8;

/**
 * The share of `workers` calls may hold. A call that holds its worker frees it when it ends,
 * so the next delivery comes as a slot frees; given back at the grant instead, the freed
 * workers took deliveries the full room sent back (`npm run bench -- seed2-burst`: more
 * deliveries per request and the GPU less busy while work waited). But a model may have as
 * many slots as the dispatcher has workers (64 by default): calls holding every worker left
 * the room one place and no worker to bring requests to the scheduler, which then served
 * them in the broker's order (`npm run bench -- replay` of an overloaded trace on 64 slots:
 * realtime expired while batch and offline were all served).
 */
export const CALLS_HOLD_WORKERS = 1 / 2;

export interface FlowControlDeps {
  readonly clock: Clock;
  readonly store: RateStore;
  readonly policy: () => Policy;
  readonly newId: () => string;
  readonly options: FlowControlOptions;
  /** The model's slots now (saturation.ts); the policy's `slots` by default. */
  readonly slots?: SlotSource;
  /**
   * Answers the requests shed from a LiteTopic, those their flow's fair share cannot start in
   * time while a level stands (lib/limits/fair-share.ts); without it nothing is shed.
   */
  readonly onShed?: (shed: Shed) => Promise<ShedAnswered>;
}

/** The ids of a Shed whose answers were written: those held in a room may be let go unserved. */
export type ShedAnswered = readonly string[];

/** Requests taken from a reservoir because their flow's fair share cannot start them in time, to be answered at once. */
export interface Shed {
  readonly model: string;
  readonly tier: string;
  readonly tenant: string;
  readonly reservoir: string;
  /** Their ids (reservoir members), first to lapse first. */
  readonly ids: readonly string[];
  /** Places kept ahead of the first of them. */
  readonly ahead: number;
  readonly share: FairShare;
}

export interface SlotAsk {
  readonly flow: FlowKey;
  readonly model: string;
  readonly deadline: number;
  /** Tokens the request is expected to use (prompt + max_tokens). */
  readonly estimate: number;
  /** Of `estimate`, its prompt's: read far faster than output is generated (service-time.ts). */
  readonly promptEstimate: number;
  /** The physical LiteTopic its message came from: sent back, it returns with it (lib/limits/send-back.ts). */
  readonly liteTopic: string;
  /** Its LiteTopic's reservoir (lib/store/keys.ts reservoirKey), whose depth the fair-share report reads. */
  readonly reservoir?: string;
  /** Its place in that reservoir (the request's id): shed while it waits here, it leaves unserved. */
  readonly place?: string;
}

export interface Grant {
  readonly leaseId: string;
  /**
   * The call should give its worker back (lib/queue/types.ts `Worker`): calls already hold
   * their share of the workers. Bounded by the slots, calls could otherwise take every worker.
   */
  readonly freesWorker: boolean;
  /** Gives the slot back and charges the flow what the call really used (unknown: what it asked). */
  release(usedTokens: Tokens | undefined): Promise<void>;
  /** Gives the slot back unused: no call was made (its request was answered meanwhile); nothing charged or timed. */
  cancel(): Promise<void>;
}

/** A request sent back from a full room: Suspended `ms`, or, `late`, answered now with Retry-After `ms`. */
interface SendBackAnswer {
  readonly ms: number;
  readonly late: boolean;
}

export type Verdict =
  | { readonly kind: 'granted'; readonly grant: Grant }
  /**
   * Back to the LiteTopic for `ms`: too many wait here, or it was held as long as allowed.
   * `onRecallable` goes to the engine with the Suspend (lib/queue/types.ts): sent back from a
   * full room, the request is called back early if the room empties first (sent-back.ts).
   */
  | { readonly kind: 'suspend'; readonly ms: number; readonly onRecallable?: (recall: Recall) => void }
  | { readonly kind: 'expired' }
  /**
   * Its reservoir place was shed past its flow's fair share while it waited here, and the shed
   * answered its client: it ends with no call (a call would take a slot for an answer given).
   */
  | { readonly kind: 'shed' }
  /** It cannot start before its deadline: answer now; the work ahead should be done in `retryAfterMs`. */
  | { readonly kind: 'late'; readonly retryAfterMs: number };

export interface FlowControl {
  ask(ask: SlotAsk): Promise<Verdict>;
  /** Requests waiting here now. */
  waiting(): number;
  /** Holds a message whose pace booked it `ms` ahead, if there is room (pace-hold.ts); undefined: Suspend it. */
  holdForPace(ms: number): Promise<void> | undefined;
}

interface Entry {
  readonly liteTopic: string;
  /** Its flow as the fair-share report counts flows: its reservoir, or its tenant and account. */
  readonly flow: string;
  /** What it asks: its prompt, and its max_tokens (the rest of its estimate). */
  readonly asked: Tokens;
  /** Its place in its reservoir, if it has one (SlotAsk.place). */
  readonly place?: string;
  settle(verdict: Verdict): void;
}

/** A waiter sent back to make a place for a newcomer, with the model it waits for. */
interface Victim {
  readonly m: ModelFlows;
  readonly gate: ModelGate;
  readonly q: TierQueue<Entry>;
  readonly w: Waiter<Entry>;
}

interface ModelFlows {
  readonly model: string;
  readonly key: string;
  readonly tiers: Map<string, TierQueue<Entry>>;
  size: number;
  pumping: boolean;
  again: boolean;
  /** Slots in use per tier across all dispatchers, as the gate last said. */
  inUse: Readonly<Record<string, number>>;
  /** This dispatcher's calls in flight: when each is expected to end (Infinity: speed not known yet). */
  calls: Map<string, number>;
  cancelKeepalive: (() => void) | undefined;
  /** Requests this dispatcher sent back, until they return. */
  sentBack: SentBack;
  /** A fair-share report is being made. */
  reporting: boolean;
}

/** A flow within its tier, as one string, when its reservoir is not known (an older edge's message). */
const flowId = (key: FlowKey) => `${key.tenant}\n${key.account}`;
const isReservoir = (flow: string) => !flow.includes('\n');

/** Reservoirs read before each fair-share report at most, those read longest ago first. */
export const DEPTH_READS_PER_REPORT = 32;

export function createFlowControl(deps: FlowControlDeps): FlowControl {
  const { clock, store } = deps;
  const maxWaiting = deps.options.maxWaiting ?? 32;
  const holdMaxMs = deps.options.holdMaxMs ?? DEFAULT_HOLD_MAX_MS;
  const keepaliveMs = deps.options.keepaliveMs ?? 500;
  // A waiting tier's mark outlives two keep-alives, and no more once its waiters are gone.
  const reclaimMs = 2 * keepaliveMs;
  const { leaseMs, minSuspendMs } = deps.options;
  const maxSendBackMs = deps.options.maxSendBackMs ?? DEFAULT_MAX_SEND_BACK_MS;
  const models = new Map<string, ModelFlows>();
  /** This dispatcher, as the gate tells askers apart (claims). */
  const asker = deps.newId();
  const speed = new ServiceTime();
  const shares = new FairShareReport();
  /** The tokens a waiter's call is expected to use: its prompt, and what its flow's calls generate of what they ask. */
  const expectedUse = (model: string, w: Waiter<Entry>): Tokens => ({
    prompt: w.value.asked.prompt,
    output: speed.expectedOutput(model, w.key, w.value.asked.output),
  });
  /** The slot time a waiter's call is expected to take, at the model's speed. */
  const expectedMs = (model: string, w: Waiter<Entry>) => speed.estimateMs(model, expectedUse(model, w));
  const slotsOf = (model: string, declared: Model) => (deps.slots ? deps.slots.slots(model, declared) : declared.slots);
  let seq = 0;
  let total = 0;
  /** Per model and tier: when a request of it last asked here. A lender asked lately is active. */
  const lastAsked = new Map<string, number>();
  const activeWithinMs = deps.options.activeWithinMs ?? 30_000;
  /**
   * Per model and tier: slots in use across dispatchers plus waiting here, at their recent peak.
   * Sampled as the gate answers, when the counts are fresh: between answers they miss releases.
   */
  const demand = new DemandPeak();
  const noteDemand = (m: ModelFlows) => {
    const now = clock.now();
    for (const [tier, q] of m.tiers) demand.observe(`${m.model}\n${tier}`, (own(m.inUse, tier) ?? 0) + q.size, now);
  };
  const workers = deps.options.workers;
  const reservedWorkers = workers === undefined ? 0 : Math.max(1, Math.ceil(workers * RESERVED_WORKERS));
  const callWorkers = workers === undefined ? 0 : Math.floor(workers * CALLS_HOLD_WORKERS);
  /** Calls running that hold their worker. */
  let callsHoldingWorkers = 0;
  /** Places for requests held here now: the bound, less what this dispatcher's calls take of the workers. */
  function room(): number {
    if (workers === undefined) return maxWaiting;
    return Math.max(1, Math.min(maxWaiting, workers - callsHoldingWorkers - reservedWorkers));
  }
  // Half the layer's places at most, and never past its bound together with the requests waiting for a slot:
  // the other half stays for those, so a heavier tier's request still finds a place.
  const paceHold = createPaceHold({
    clock,
    maxHeld: Math.floor(maxWaiting / 2),
    maxHoldMs: deps.options.maxPaceHoldMs ?? DEFAULT_MAX_PACE_HOLD_MS,
    room: (held) => held + total < room(),
  });

  function flowsOf(model: string): ModelFlows {
    let m = models.get(model);
    if (m) return m;
    m = {
      model,
      key: slotGateKey(model),
      tiers: new Map(),
      size: 0,
      pumping: false,
      again: false,
      inUse: {},
      calls: new Map(),
      cancelKeepalive: undefined,
      sentBack: new SentBack(),
      reporting: false,
    };
    models.set(model, m);
    const flows = m;
    // One watch per model for the life of the process: models are few, named by the policy.
    store.watchSlots(m.key, () => void pump(flows));
    return m;
  }

  /** The model's gate under today's policy and slots; undefined for a model the policy no longer names. */
  function gateOf(model: string): ModelGate | undefined {
    const policy = deps.policy();
    const declared = own(policy.models, model);
    return declared && modelGate(policy, model, slotsOf(model, declared));
  }

  const weightOf = (gate: ModelGate, tier: string) => gate.weights.get(tier)?.weight ?? 0;

  /**
   * Expected slot time of what waits here ahead of a request of `flow` due at `deadline`,
   * spread over the model's slots: every waiter of a heavier tier, and of its own tier those
   * fair order starts first (fair-queue.ts aheadOf). Counted by deadline alone, a steady
   * tenant's newcomer was answered it could not start in time behind another tenant's
   * backlog that fair order would have served after it.
   */
  function workAheadMs(m: ModelFlows, gate: ModelGate, flow: FlowKey, deadline: number): number | undefined {
    let ms = 0;
    const weight = weightOf(gate, flow.tier);
    for (const [name, q] of m.tiers) {
      const heavier = weightOf(gate, name) > weight;
      if (!heavier && name !== flow.tier) continue;
      for (const w of heavier ? q.waiters() : q.aheadOf(flow, deadline)) {
        const one = expectedMs(m.model, w);
        if (one === undefined) return undefined;
        ms += one;
      }
    }
    return ms / Math.max(1, gate.open.capacity);
  }

  /** Deadlines at or before this are pressed now: their slack is down to PRESSED_SHARE_OF_WAIT of their tier's wait. */
  function pressedBy(gate: ModelGate, tier: string, now: number): number {
    const maxWait = gate.maxWaitMs.get(tier);
    return maxWait === undefined ? Infinity : now + PRESSED_SHARE_OF_WAIT * maxWait;
  }

  /** Its slack is down to the pressed share of its tier's maximum wait (tier-order.ts). */
  function pressing(gate: ModelGate, tier: string, deadline: number, now: number): boolean {
    return deadline <= pressedBy(gate, tier, now);
  }

  function worstWaiter(
    m: ModelFlows,
    gate: ModelGate,
  ): { q: TierQueue<Entry>; w: Waiter<Entry>; weight: number } | undefined {
    let worst: { q: TierQueue<Entry>; w: Waiter<Entry>; weight: number } | undefined;
    for (const [name, q] of m.tiers) {
      const weight = weightOf(gate, name);
      for (const w of q.waiters()) {
        if (!worst || weight < worst.weight || (weight === worst.weight && w.deadline > worst.w.deadline))
          worst = { q, w, weight };
      }
    }
    return worst;
  }

  /**
   * A newcomer to a full room starts at once, and takes no waiter's place, when nothing of its
   * model waits here and the model's gate had a slot free at its last answer. The room is one
   * bound for every model the dispatcher serves, but their slots never compete: without this,
   * a backlog on one model sent every request of another back to its LiteTopic, its GPU idle.
   * Stale (another dispatcher took the slot since), it waits one past the bound, no more: its
   * model now has a waiter.
   */
  function startsNow(m: ModelFlows, gate: ModelGate): boolean {
    return m.size === 0 && slotsInUse(m.inUse) < gate.open.capacity;
  }

  /**
   * Whom a newcomer to a full room sends back in its place, if anyone: a waiter of another model
   * that holds more than its share of the room (victimOfModels); else, of its own model, the
   * latest-due waiter of the lightest tier when the newcomer's tier is heavier; one of an equally
   * heavy other tier when the newcomer's deadline presses and that one's does not. Within its own
   * tier, see victimInTier.
   */
  function victimFor(m: ModelFlows, gate: ModelGate, ask: SlotAsk, now: number): Victim | undefined {
    const other = victimOfModels(m);
    if (other) return other;
    const worst = worstWaiter(m, gate);
    const weight = weightOf(gate, ask.flow.tier);
    if (worst && weight > worst.weight) return { m, gate, ...worst };
    if (
      worst &&
      weight === worst.weight &&
      worst.w.key.tier !== ask.flow.tier &&
      pressing(gate, ask.flow.tier, ask.deadline, now) &&
      !pressing(gate, worst.w.key.tier, worst.w.deadline, now)
    )
      return { m, gate, ...worst };
    const inTier = victimInTier(m, gate, ask, now);
    return inTier && { m, gate, ...inTier };
  }

  /**
   * Each model with work has an even share of the room (at least one place): a newcomer whose
   * model holds less than its share takes the place of the worst waiter (worstWaiter) of the model
   * that holds the most, past its share. Tiers and accounts are ordered within a model, whose
   * slots they share; across models nothing is, so one model's backlog must not hold the places
   * another model's requests need to wait for their own slots. Shares, not any imbalance: at
   * their shares two busy models stop taking places from each other, a delivery each time.
   */
  function victimOfModels(m: ModelFlows): Victim | undefined {
    let most: ModelFlows | undefined;
    let busy = 1;
    for (const o of models.values()) {
      if (o === m || o.size === 0) continue;
      busy++;
      if (!most || o.size > most.size) most = o;
    }
    if (!most) return undefined;
    const share = Math.max(1, Math.floor(room() / busy));
    if (m.size >= share || most.size <= share) return undefined;
    const gate = gateOf(most.model);
    const worst = gate && worstWaiter(most, gate);
    return worst && { m: most, gate: gate!, q: worst.q, w: worst.w };
  }

  /**
   * Within a tier the room keeps a place for every account that has work: a newcomer whose
   * account has nothing waiting here takes the place of the latest-due request of the
   * account with the most waiting (two or more, so that one keeps a request here and its
   * returns do not evict in turn). Fair order can only pick among what waits here: without
   * it, one tenant's backlog filled the room, and every other tenant's newcomers went back to
   * their LiteTopics until they expired (a replayed realtime flash crowd of one tenant,
   * test/bench/flash-crowd.test.ts). Its pressed deadlines do not keep the places: a backlog's
   * requests are all old. A newcomer whose own deadline presses may also take the place of
   * one with slack of its own account or of an account with more waiting here. By any
   * earlier deadline instead, a sent-back request came back ahead of the one that took its
   * place and evicted it in turn, a delivery each time.
   */
  function victimInTier(
    m: ModelFlows,
    gate: ModelGate,
    ask: SlotAsk,
    now: number,
  ): { q: TierQueue<Entry>; w: Waiter<Entry> } | undefined {
    const q = m.tiers.get(ask.flow.tier);
    if (!q) return undefined;
    const mine = q.waitingOf(ask.flow);
    const crowded = mine === 0 ? q.crowded() : undefined;
    if (crowded) return { q, w: crowded };
    if (!pressing(gate, ask.flow.tier, ask.deadline, now)) return undefined;
    let best: Waiter<Entry> | undefined;
    for (const w of q.waiters()) {
      if (pressing(gate, w.key.tier, w.deadline, now)) continue;
      const ownAccount = w.key.tenant === ask.flow.tenant && w.key.account === ask.flow.account;
      if (!ownAccount && q.waitingOf(w.key) <= mine) continue;
      if (!best || w.deadline > best.deadline) best = w;
    }
    return best && { q, w: best };
  }

  /**
   * A request sent back from a full room stays away until the waiters here have started,
   * and after the requests of its tier sent back before it (by any dispatcher),
   * PLACES_PER_RETURN starts apart. All at once they would meet a full room again and come
   * back once more each (a delivery per return); spaced, each finds the places the starts
   * since the last return freed. It returns with its LiteTopic instead when that is due back
   * (the broker keeps one pause per LiteTopic, the last Suspend's). The rule and its state are
   * the store's (lib/limits/send-back.ts); the Suspend pauses its LiteTopic, so what queues
   * behind it stays in the broker meanwhile. Never longer than maxSendBackMs.
   *
   * Late when the room here needs longer than its deadline to start its waiters, the deadline,
   * not the bound, would end the Suspend, and more than LATE_WORTH_SHARE_OF_WAIT of its wait is
   * left: it would return only to expire, after its tier's whole maximum wait, so it is answered
   * now. Not when only its place in the schedule, or its LiteTopic's return, is past the
   * deadline: the places are a spacing, and a room that empties calls its sent-back requests
   * back early, the earliest deadline first. Judged by its place, or near its deadline,
   * `npm run bench -- slots-from-metrics` ("declared half, trusted") answered late batch
   * requests that it serves.
   */
  async function sendBack(
    m: ModelFlows,
    gate: ModelGate,
    tier: string,
    deadline: number,
    liteTopic: string,
  ): Promise<SendBackAnswer> {
    const now = clock.now();
    let ms = minSuspendMs;
    let perStartMs = 0;
    // Before the model's first completion, what its calls in flight already took: at the start of a
    // flood, sent back for the shortest Suspend, every request beyond the room came back many times
    // before the first call ended.
    const msOf = speed.atLeast(m.model, now);
    let waitersMs = 0;
    let n = 0;
    for (const q of m.tiers.values()) for (const w of q.waiters()) ((waitersMs += msOf(expectedUse(m.model, w))), n++);
    if (waitersMs > 0) {
      const inUse = slotsInUse(m.inUse);
      // Beside other dispatchers the waiters here start at this dispatcher's share of the starts,
      // taken as its share of the calls. That share is read as at least half: a dispatcher just
      // started, with a call or two, would otherwise send requests away many times too long.
      const own = Math.min(inUse, Math.max(m.calls.size, Math.ceil(inUse / 2)));
      ms = Math.max(ms, waitersMs / Math.max(1, own));
      // The schedule is every dispatcher's: its places are the model's starts, not this one's.
      perStartMs = waitersMs / n / Math.max(1, inUse);
    }
    const left = deadline - now;
    const worthMs = LATE_WORTH_SHARE_OF_WAIT * (gate.maxWaitMs.get(tier) ?? 0);
    if (ms > left && left <= maxSendBackMs && left >= worthMs) return { ms: Math.ceil(ms), late: true };
    const spec = {
      ms,
      placeMs: PLACES_PER_RETURN * perStartMs,
      minMs: minSuspendMs,
      maxMs: deadline - now,
      boundMs: maxSendBackMs,
    };
    try {
      const keys = { key: liteTopicReturnKey(m.model, liteTopic), scheduleKey: returnScheduleKey(m.model, tier) };
      return { ms: await store.sendBack({ ...spec, ...keys }), late: false };
    } catch {
      // A shared store is guarded (lib/store/guarded.ts) and answers from its fallback's own
      // schedule; a bare store that throws leaves the room's own time, never an unsettled waiter.
      return { ms: sendBackRule(spec, { pendingAt: undefined, nextAt: undefined }, now).ms, late: false };
    }
  }

  function take(m: ModelFlows, q: TierQueue<Entry>, w: Waiter<Entry>, started: boolean): boolean {
    // A waiter removed while its slot was being acquired must not be counted out twice:
    // negative counts would stop the pump from ever asking the gate again.
    const had = started ? q.start(w) : q.remove(w);
    if (had) {
      m.size--;
      total--;
    }
    return had;
  }

  function grantFor(m: ModelFlows, q: TierQueue<Entry>, w: Waiter<Entry>, leaseId: string): Grant {
    const startedAt = clock.now();
    m.calls.set(leaseId, startedAt + (expectedMs(m.model, w) ?? Infinity));
    speed.started(m.model, leaseId, startedAt, w.value.asked);
    shares.call(w.value.flow, 1);
    const freesWorker = workers !== undefined && callsHoldingWorkers >= callWorkers;
    if (!freesWorker) callsHoldingWorkers++;
    let released = false;
    const giveBack = () => {
      if (released) return false;
      released = true;
      m.calls.delete(leaseId);
      speed.ended(m.model, leaseId);
      shares.call(w.value.flow, -1);
      if (!freesWorker) callsHoldingWorkers--;
      return true;
    };
    return {
      leaseId,
      freesWorker,
      async cancel() {
        if (!giveBack()) return;
        q.correct(w.key, -w.estimate);
        await store.releaseSlot(m.key, leaseId);
        void pump(m);
      },
      async release(usedTokens) {
        if (!giveBack()) return;
        const used = usedTokens ?? w.value.asked;
        if (usedTokens !== undefined) speed.observeUse(m.model, w.key, usedTokens.output, w.value.asked.output);
        speed.observe(m.model, clock.now() - startedAt, used);
        shares.observe(m.model, w.key.tier, clock.now() - startedAt);
        q.correct(w.key, used.prompt + used.output - w.estimate);
        await store.releaseSlot(m.key, leaseId);
        void pump(m);
      },
    };
  }

  async function pump(m: ModelFlows): Promise<void> {
    if (m.pumping) {
      m.again = true;
      return;
    }
    m.pumping = true;
    m.cancelKeepalive?.();
    m.cancelKeepalive = undefined;
    try {
      do {
        m.again = false;
        while (m.size > 0 && (await grantOne(m)));
      } while (m.again);
    } finally {
      m.pumping = false;
    }
    if (m.size > 0 && !m.cancelKeepalive) {
      m.cancelKeepalive = clock.setTimer(keepaliveMs, () => {
        m.cancelKeepalive = undefined;
        void pump(m);
      });
    }
    if (m.size === 0) callBack(m);
    void reportShares(m);
  }

  /**
   * Tells the edge, now and then, the level the flows of each over-committed tier are filled to
   * within its maximum wait (lib/limits/fair-share.ts): a flood's excess is then refused at
   * admission, not at its deadline. The flows are those waiting here or sent back from here; the
   * depths of those read longest ago are read again first. Best effort: a report lost only
   * leaves the edge as it was.
   */
  async function reportShares(m: ModelFlows): Promise<void> {
    const gate = gateOf(m.model);
    if (!gate || m.reporting || !shares.due(m.model, clock.now())) return;
    m.reporting = true;
    try {
      const now = clock.now();
      const tiers = new Map<string, Map<string, number>>();
      for (const tier of gate.weights.keys()) {
        const here = new Map<string, number>();
        for (const w of m.tiers.get(tier)?.waiters() ?? []) here.set(w.value.flow, (here.get(w.value.flow) ?? 0) + 1);
        for (const flow of m.sentBack.flowsAway(tier, now)) here.set(flow, here.get(flow) ?? 1);
        if (here.size > 0) tiers.set(tier, here);
      }
      const reservoirs = [...tiers.values()].flatMap((here) => [...here.keys()].filter(isReservoir));
      const read = shares.stalest(reservoirs, DEPTH_READS_PER_REPORT);
      const depths = await Promise.all(read.map((r) => store.reservoirDepth(r).catch(() => undefined)));
      read.forEach((r, i) => depths[i] !== undefined && shares.noteDepth(r, depths[i]!, clock.now()));
      for (const [tier, here] of tiers) {
        const backlog: TierBacklog = {
          depths: [...here].map(([flow, n]) => Math.max(n, shares.depth(flow) ?? 0)),
          slots: gate.open.capacity,
          meanCallMs: shares.meanCallMs(m.model, tier) ?? 0,
          maxWaitMs: gate.maxWaitMs.get(tier) ?? 0,
        };
        const share = fairShare(backlog);
        if (!share) continue;
        await store.putMember(
          fairShareKey(m.model, tier),
          asker,
          encodeReport(share),
          FAIR_SHARE_TTL_MS,
          MAX_REPORTERS,
        );
        if (deps.onShed && own(deps.policy().tiers, tier)?.fairShareAtAdmission !== false)
          await shedLate(m, tier, here.keys(), backlog, share, deps.onShed);
      }
    } catch {
      // The next report tries again.
    } finally {
      m.reporting = false;
    }
  }

  /**
   * Takes from the reservoirs of `flows` the places their fair share cannot start in time
   * (latePlaces), the deepest LiteTopics first, and has them answered: admitted before the
   * level was known, or since left behind by the model's slower calls.
   */
  async function shedLate(
    m: ModelFlows,
    tier: string,
    flows: Iterable<string>,
    backlog: TierBacklog,
    share: FairShare,
    answer: (shed: Shed) => Promise<ShedAnswered>,
  ): Promise<void> {
    const checked = [...flows]
      .filter((flow) => isReservoir(flow) && (shares.depth(flow) ?? 0) > 1 && shares.tenant(flow) !== undefined)
      .sort((a, b) => (shares.depth(b) ?? 0) - (shares.depth(a) ?? 0))
      .slice(0, SHED_CHECKS_PER_REPORT);
    for (const reservoir of checked) {
      const places = await store.reservoirPlaces(reservoir, SHED_READS_PER_RESERVOIR);
      const late = latePlaces(
        places.map((p) => p.lapsesAt),
        clock.now(),
        backlog,
        shares.calls(reservoir),
      );
      if (late.length === 0) continue;
      const ids = await store.shedReservoir(
        reservoir,
        late.map((i) => places[i]!.member),
      );
      if (ids.length === 0) continue;
      shares.noteDepth(reservoir, Math.max(places.length, shares.depth(reservoir) ?? 0) - ids.length, clock.now());
      const ahead = late[0]!;
      const answered = await answer({
        model: m.model,
        tier,
        tenant: shares.tenant(reservoir)!,
        reservoir,
        ids,
        ahead,
        share,
      });
      letShedGo(m, tier, reservoir, answered);
    }
  }

  /**
   * The shed requests held here leave unserved: their clients have their answer. A place late by
   * its flow's share may still be held here (a room larger than the flows' heads, or a place
   * behind its flow's first in the room), and served it took a slot, and a call, for an answer
   * already given. Those of other dispatchers' rooms are caught before their call (the
   * dispatcher reads the result again after a long wait).
   */
  function letShedGo(m: ModelFlows, tier: string, reservoir: string, answered: ShedAnswered): void {
    const q = m.tiers.get(tier);
    if (!q || answered.length === 0) return;
    const ids = new Set(answered);
    for (const w of [...q.waiters()])
      if (w.value.flow === reservoir && w.value.place !== undefined && ids.has(w.value.place))
        settle(m, q, w, { kind: 'shed' });
  }

  /**
   * Nothing of the model waits here: calls back requests sent back earlier, as many as the
   * room has places and the gate had slots free at its last answer (one at least: a pump
   * with nothing waiting follows a release). Back, they ask the gate like any newcomer;
   * the gate's fresh answer then calls back more while slots stay free.
   */
  function callBack(m: ModelFlows): void {
    if (m.sentBack.size === 0) return;
    const gate = gateOf(m.model);
    if (!gate) return;
    const places = room() - total - paceHold.held();
    const free = Math.max(1, gate.open.capacity - slotsInUse(m.inUse));
    for (const recall of m.sentBack.take(Math.min(places, free), (tier) => weightOf(gate, tier), clock.now()))
      void recall().catch(() => false);
  }

  /** The Suspend of a request sent back from a full room, which the room may call back early; or late. */
  function sentBackVerdict(
    m: ModelFlows,
    tier: string,
    flow: string,
    deadline: number,
    { ms, late }: SendBackAnswer,
  ): Verdict {
    if (late) return { kind: 'late', retryAfterMs: ms };
    const returnAt = clock.now() + ms;
    const away = { tier, flow, deadline, returnAt };
    return { kind: 'suspend', ms, onRecallable: (recall) => m.sentBack.add({ ...away, recall }) };
  }

  /** Asks the gate for the next request in order; false when no waiting tier can have a slot now. */
  async function grantOne(m: ModelFlows): Promise<boolean> {
    const gate = gateOf(m.model);
    const waitingTiers = [...m.tiers].filter(([, q]) => q.size > 0).map(([name]) => name);
    if (!gate) {
      for (const name of waitingTiers)
        for (const w of [...m.tiers.get(name)!.waiters()])
          settle(m, m.tiers.get(name)!, w, { kind: 'suspend', ms: holdMaxMs });
      return false;
    }
    const at = clock.now();
    const pressed = (tier: string) => {
      let earliest = Infinity;
      for (const w of m.tiers.get(tier)!.waiters()) earliest = Math.min(earliest, w.deadline);
      return pressing(gate, tier, earliest, at);
    };
    const ends = [...m.calls.values()].map((end) => end - at).sort((a, b) => a - b);
    const spread = (w: Waiter<Entry>) => {
      const ms = expectedMs(m.model, w);
      return ms === undefined ? 0 : waitForRelease(ends, ms);
    };
    for (const { tier, yields } of tierOrder(waitingTiers, gate.weights, m.inUse, pressed)) {
      const q = m.tiers.get(tier)!;
      // A request near its deadline goes before one that can wait, within a request of fair order.
      const w = q.peek(spread, pressedBy(gate, tier, at));
      if (!w) continue;
      // Unpressed, it yields to heavier tiers waiting in other dispatchers too: the gate sees their claims.
      const heavier = gate.heavier.get(tier) ?? [];
      const yieldTo = heavier.length > 0 && !pressed(tier) ? heavier : [];
      const now = clock.now();
      // A lender's recent peak beyond what it holds, less the releases due within its short-call time
      // (discounted as its headroom's are: the earliest expected ends gather the short estimates).
      const need = (lender: string) => {
        const key = `${m.model}\n${lender}`;
        if (now - (lastAsked.get(key) ?? -Infinity) > activeWithinMs) return undefined;
        const peak = demand.peak(key, now, gate.maxWaitMs.get(lender) ?? 0);
        const shortMs = gate.shortCallMs.get(lender) ?? 0;
        const near = ends.filter((ms) => endsNear(ms, shortMs)).length;
        return Math.max(0, peak - (own(m.inUse, lender) ?? 0) - Math.max(0, near - (RELEASES_NEAR - 1)));
      };
      const callMs = expectedMs(m.model, w);
      const lendable = borrowSpec(gate, tier, callMs, need);
      const spec = yields ? asBorrower(lendable, tier) : lendable;
      const leaseId = deps.newId();
      const decision = await store.acquireSlot({
        ...spec,
        key: m.key,
        tier,
        leaseId,
        leaseMs,
        reclaimMs,
        moreWaiting: q.size > 1,
        asker,
        deadline: w.deadline,
        expectedMs: callMs,
        yieldTo,
      });
      m.inUse = decision.inUse;
      if (decision.granted) {
        if (take(m, q, w, true)) w.value.settle({ kind: 'granted', grant: grantFor(m, q, w, leaseId) });
        // It left (deadline, eviction) while the gate answered: the slot goes to the next one.
        else await store.releaseSlot(m.key, leaseId);
        noteDemand(m);
        return true;
      }
      noteDemand(m);
      if (slotsInUse(decision.inUse) >= spec.capacity) {
        deps.slots?.full(m.model);
        return false;
      }
    }
    return false;
  }

  function settle(m: ModelFlows, q: TierQueue<Entry>, w: Waiter<Entry>, verdict: Verdict): void {
    if (take(m, q, w, false)) w.value.settle(verdict);
  }

  return {
    waiting: () => total,
    holdForPace: (ms) => paceHold.hold(ms),
    ask(ask) {
      const now = clock.now();
      if (now >= ask.deadline) return Promise.resolve({ kind: 'expired' });
      const m = flowsOf(ask.model);
      lastAsked.set(`${ask.model}\n${ask.flow.tier}`, now);
      if (ask.reservoir !== undefined) shares.noteTenant(ask.reservoir, ask.flow.tenant);
      const gate = gateOf(ask.model);
      if (gate) {
        const ahead = workAheadMs(m, gate, ask.flow, ask.deadline);
        if (ahead !== undefined && now + ahead > ask.deadline)
          return Promise.resolve({ kind: 'late', retryAfterMs: Math.ceil(ahead) });
        if (total + paceHold.held() >= room() && !startsNow(m, gate)) {
          const victim = victimFor(m, gate, ask, now);
          if (!victim)
            return sendBack(m, gate, ask.flow.tier, ask.deadline, ask.liteTopic).then((back) =>
              sentBackVerdict(m, ask.flow.tier, ask.reservoir ?? flowId(ask.flow), ask.deadline, back),
            );
          // Out of the room now, so the newcomer has its place; its Suspend once the store answered.
          const { m: from, gate: fromGate, q: fromQueue, w: evicted } = victim;
          if (take(from, fromQueue, evicted, false))
            void sendBack(from, fromGate, evicted.key.tier, evicted.deadline, evicted.value.liteTopic).then((back) =>
              evicted.value.settle(sentBackVerdict(from, evicted.key.tier, evicted.value.flow, evicted.deadline, back)),
            );
        }
      }
      let q = m.tiers.get(ask.flow.tier);
      if (!q) m.tiers.set(ask.flow.tier, (q = new TierQueue()));
      const queue = q;
      return new Promise<Verdict>((resolve) => {
        const heldUntil = Math.min(ask.deadline, now + holdMaxMs);
        let cancel: (() => void) | undefined;
        const w: Waiter<Entry> = {
          key: ask.flow,
          deadline: ask.deadline,
          estimate: ask.estimate,
          seq: ++seq,
          value: {
            liteTopic: ask.liteTopic,
            flow: ask.reservoir ?? flowId(ask.flow),
            asked: { prompt: ask.promptEstimate, output: Math.max(0, ask.estimate - ask.promptEstimate) },
            ...(ask.place === undefined ? {} : { place: ask.place }),
            settle: (verdict) => {
              cancel?.();
              resolve(verdict);
            },
          },
        };
        cancel = clock.setTimer(heldUntil - now, () => {
          cancel = undefined;
          settle(
            m,
            queue,
            w,
            clock.now() >= ask.deadline ? { kind: 'expired' } : { kind: 'suspend', ms: minSuspendMs },
          );
        });
        queue.push(w);
        m.size++;
        total++;
        void pump(m);
      });
    },
  };
}
