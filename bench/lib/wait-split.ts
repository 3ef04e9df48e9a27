/**
 * Where a Sluice request's time goes, from the dispatcher's events: the edge
 * (send to enqueue), the broker (enqueue to first delivery), away in its
 * LiteTopic after a Suspend by cause, held in flow control for a GPU slot, the
 * rest inside the dispatcher (short pacing sleeps, store calls), the GPU call,
 * and the reply (result write to the client's answer). The parts of a served
 * request add up to its latency, so their shares say where the seconds went.
 */
import type { DispatchEvent } from '../../lib/dispatch-events.js';
import { percentiles, round, type Percentiles } from './recorder.js';

/** What the events said about one request; mutated as they come. */
export interface WaitTrace {
  /** The LiteTopic it waits in (known from admission on). */
  liteTopic?: string;
  /** Where it is now, and since when: what a stalled run reports (stall.ts). */
  where?: { readonly state: WaitState; readonly since: number };
  enqueuedAt?: number;
  /** Enqueue to the first delivery. */
  broker?: number;
  /** Away in the LiteTopic after a Suspend (or a failure's backoff: `other`), by cause. */
  readonly away: { pace: number; capacity: number; paused: number; other: number };
  /** Held in flow control for a slot, every delivery's hold summed. */
  slot: number;
  /** The last start on the GPU. */
  startedAt?: number;
  upstream?: number;
  firstToken?: number;
  /** Deliveries after the first, by what came before: a Suspend or a failure (by cause), or none (in hand). */
  readonly again: Record<AgainCause, number>;
  /** When and why it last went back to its LiteTopic (lab-side, so right across dispatchers). */
  parked?: { at: number; cause: keyof WaitTrace['away'] };
}

/**
 * Why a request was delivered once more: it came back from a Suspend (pace, capacity,
 * paused) or a failure's backoff (other), or the engine gave it again while a dispatcher
 * still held it (`inHand`: its invisible time ran out, as under a call that outlasts it).
 */
export const AGAIN_CAUSES = ['capacity', 'pace', 'paused', 'other', 'inHand'] as const;
export type AgainCause = (typeof AGAIN_CAUSES)[number];

export type WaitState =
  | 'in its LiteTopic, not delivered yet'
  | 'in the dispatcher, being paced'
  | 'held in flow control for a GPU slot'
  | 'suspended: pace'
  | 'suspended: capacity'
  | 'suspended: paused'
  | 'failed, redelivery pending'
  | 'on the GPU'
  | 'answered';

const STATE_AFTER: Readonly<Partial<Record<DispatchEvent['type'], WaitState>>> = {
  delivered: 'in the dispatcher, being paced',
  'awaiting-slot': 'held in flow control for a GPU slot',
  retrying: 'failed, redelivery pending',
  started: 'on the GPU',
  completed: 'answered',
  failed: 'answered',
  expired: 'answered',
};

export const SPLIT_PARTS = [
  'edge',
  'broker',
  'suspendPace',
  'suspendCapacity',
  'suspendPaused',
  'suspendOther',
  'slot',
  'dispatcher',
  'upstream',
  'reply',
] as const;
export type SplitPart = (typeof SPLIT_PARTS)[number];

export interface PartFigures extends Percentiles {
  /** Of the summed latency of the requests counted, the part this stage took. */
  readonly share: number;
}

export interface WaitSplitFigures {
  /** Served requests with a complete trace. */
  readonly n: number;
  readonly parts: Readonly<Record<SplitPart, PartFigures>>;
  /** Streams: from the GPU call's start to its first generated text. */
  readonly firstTokenMs?: Percentiles;
  /** Deliveries per request (the first and every one after), and of those after the first, how many per request by cause. */
  readonly deliveries: Percentiles & { readonly mean: number; readonly again: Readonly<Record<AgainCause, number>> };
}

function noneAgain(): Record<AgainCause, number> {
  return { pace: 0, capacity: 0, paused: 0, other: 0, inHand: 0 };
}

/** Follows dispatcher events per request id; `trace(id)` is the live record for it. */
export class WaitTracker {
  private readonly traces = new Map<string, WaitTrace>();

  trace(id: string): WaitTrace {
    let t = this.traces.get(id);
    if (!t)
      this.traces.set(id, (t = { away: { pace: 0, capacity: 0, paused: 0, other: 0 }, slot: 0, again: noneAgain() }));
    return t;
  }

  /** Forgets a request whose answer is in. */
  forget(id: string): void {
    this.traces.delete(id);
  }

  /** The edge admitted it into `liteTopic`. */
  admitted(id: string, liteTopic: string | undefined, now: number): WaitTrace {
    const t = this.trace(id);
    if (liteTopic !== undefined) t.liteTopic = liteTopic;
    t.where = { state: 'in its LiteTopic, not delivered yet', since: now };
    return t;
  }

  observe(event: DispatchEvent, now: number): void {
    if (!('envelope' in event)) return;
    const t = this.trace(event.envelope.id);
    t.enqueuedAt ??= event.envelope.enqueuedAt;
    t.liteTopic = event.envelope.liteTopic;
    const state = event.type === 'suspended' ? (`suspended: ${event.cause}` as const) : STATE_AFTER[event.type];
    if (state) t.where = { state, since: now };
    switch (event.type) {
      case 'delivered':
        if (t.broker === undefined) t.broker = now - event.envelope.enqueuedAt;
        else if (t.parked) {
          t.away[t.parked.cause] += now - t.parked.at;
          t.again[t.parked.cause] += 1;
        } else t.again.inHand += 1;
        t.parked = undefined;
        break;
      case 'suspended':
        t.parked = { at: now, cause: event.cause };
        if (event.heldMs !== undefined) t.slot += event.heldMs;
        break;
      case 'retrying':
        t.parked = { at: now, cause: 'other' };
        break;
      case 'started':
        t.startedAt = now;
        t.slot += event.slotWaitMs ?? 0;
        break;
      case 'completed':
        if (event.upstreamMs !== undefined) t.upstream = event.upstreamMs;
        if (event.firstTokenMs !== undefined) t.firstToken = event.firstTokenMs;
        break;
    }
  }
}

/** One served request's parts, or undefined when its trace is incomplete. */
export function splitOf(t: WaitTrace, sentAt: number, answeredAt: number): Record<SplitPart, number> | undefined {
  if (t.enqueuedAt === undefined || t.broker === undefined || t.startedAt === undefined || t.upstream === undefined)
    return undefined;
  const queued = t.startedAt - t.enqueuedAt;
  const held = t.broker + t.away.pace + t.away.capacity + t.away.paused + t.away.other + t.slot;
  return {
    edge: t.enqueuedAt - sentAt,
    broker: t.broker,
    suspendPace: t.away.pace,
    suspendCapacity: t.away.capacity,
    suspendPaused: t.away.paused,
    suspendOther: t.away.other,
    slot: t.slot,
    dispatcher: Math.max(0, queued - held),
    upstream: t.upstream,
    reply: Math.max(0, answeredAt - t.startedAt - t.upstream),
  };
}

export function waitSplitFigures(
  served: readonly { wait?: WaitTrace; sentAt: number; answeredAt?: number }[],
): WaitSplitFigures | undefined {
  const splits: Record<SplitPart, number>[] = [];
  const firstTokens: number[] = [];
  const deliveries: number[] = [];
  const again = noneAgain();
  for (const a of served) {
    if (!a.wait || a.answeredAt === undefined) continue;
    const s = splitOf(a.wait, a.sentAt, a.answeredAt);
    if (!s) continue;
    splits.push(s);
    if (a.wait.firstToken !== undefined) firstTokens.push(a.wait.firstToken);
    let n = 1;
    for (const cause of AGAIN_CAUSES) {
      n += a.wait.again[cause];
      again[cause] += a.wait.again[cause];
    }
    deliveries.push(n);
  }
  if (splits.length === 0) return undefined;
  const total = splits.reduce((sum, s) => sum + SPLIT_PARTS.reduce((x, p) => x + s[p], 0), 0);
  const parts = {} as Record<SplitPart, PartFigures>;
  for (const p of SPLIT_PARTS) {
    const values = splits.map((s) => s[p]);
    parts[p] = { ...percentiles(values), share: total > 0 ? round(values.reduce((x, v) => x + v, 0) / total, 4) : 0 };
  }
  const perRequest = (x: number) => round(x / splits.length, 3);
  const delivered = {
    ...percentiles(deliveries),
    mean: perRequest(deliveries.reduce((x, v) => x + v, 0)),
    again: Object.fromEntries(AGAIN_CAUSES.map((c) => [c, perRequest(again[c])])) as Record<AgainCause, number>,
  };
  return {
    n: splits.length,
    parts,
    ...(firstTokens.length ? { firstTokenMs: percentiles(firstTokens) } : {}),
    deliveries: delivered,
  };
}
