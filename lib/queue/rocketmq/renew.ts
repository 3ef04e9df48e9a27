/**
 * Keeps received messages invisible while they are in hand here.
 *
 * The client receives with auto-renew, and the 5.5.0 proxy then renews each message's
 * invisible time (60 s) shortly before it ends. For a lite message that renewal leaves the
 * LiteTopic out (ReceiveMessageActivity.handleAutoRenew registers the handle without it), so
 * the broker applies it to the parent topic's order record, logs "orderInfo of queueId is
 * null", answers SUCCESS and changes nothing: 60 s after the pop the LiteTopic is popped
 * again, and a message the dispatcher still holds is delivered a second time, with the ones
 * waiting behind it in the client's cache (the consumer's "while in hand" count). Here every
 * received message not yet settled gets its own ChangeInvisibleDuration naming the LiteTopic,
 * with `suspend` off: the broker then extends that offset alone, and the proxy stops renewing
 * it. A lite receipt handle keeps its pop time through such a change, so the client's ack and
 * Suspend on the handle it received still match.
 */
import type { Clock } from '../../clock/clock.js';
import { MAX_IN_HAND_MS } from '../in-hand.js';
import { messageIdOf, OK, statusOf } from './settle-retry.js';

/** What the broker gives a received message before it is delivered again (the proxy's default). */
export const INVISIBLE_MS = 60_000;
/** Renewed this often: two tries inside one invisible time. */
export const RENEW_EVERY_MS = 20_000;

export interface InHandOptions {
  readonly clock: Clock;
  readonly everyMs?: number;
  /** Renewals stop this long after a message arrived; the broker then delivers it again. */
  readonly maxInHandMs?: number;
}

/** Renews once, given the newest receipt handle known (undefined: the one received); resolves to the proxy's new one. */
export type Renew = (handle: string | undefined) => Promise<unknown>;

/** Newest receipt handles of settled messages kept, for a settle the client sends again. */
const SETTLED_HANDLES = 10_000;

interface Held {
  readonly renew: Renew;
  /** The handle the proxy gave the last renewal: the received one expires with its first invisible time. */
  handle?: string;
  renewAt: number;
  readonly until: number;
  /** The renewal on its way, so a settle goes to the broker after it and not before. */
  inFlight?: Promise<void>;
}

export class InHandRenewal {
  private readonly held = new Map<string, Held>();
  private readonly settledHandles = new Map<string, string>();
  private readonly everyMs: number;
  private readonly maxInHandMs: number;
  private cancel: (() => void) | undefined;
  private closed = false;

  constructor(private readonly opts: InHandOptions) {
    this.everyMs = opts.everyMs ?? RENEW_EVERY_MS;
    this.maxInHandMs = opts.maxInHandMs ?? MAX_IN_HAND_MS;
  }

  /** Number of messages being kept invisible now. */
  get size(): number {
    return this.held.size;
  }

  /**
   * A message arrived (again: its newest delivery replaces the last). `renew` extends its
   * invisible time once; a failure is left to the next round.
   */
  received(messageId: string, renew: Renew): void {
    if (this.closed) return;
    const now = this.opts.clock.now();
    this.settledHandles.delete(messageId);
    this.held.set(messageId, { renew, renewAt: now + this.everyMs, until: now + this.maxInHandMs });
    this.schedule();
  }

  /**
   * The message is being settled: no more renewals. Resolves once a renewal already on its
   * way is answered, so an ack or a short Suspend reaches the broker after it, with the
   * newest receipt handle to send it with (undefined: the one received is still good).
   */
  async settled(messageId: string): Promise<string | undefined> {
    const held = this.held.get(messageId);
    if (!held) return this.settledHandles.get(messageId);
    this.held.delete(messageId);
    await held.inFlight;
    if (held.handle === undefined) return undefined;
    this.settledHandles.set(messageId, held.handle);
    if (this.settledHandles.size > SETTLED_HANDLES)
      this.settledHandles.delete(this.settledHandles.keys().next().value!);
    return held.handle;
  }

  close(): void {
    this.closed = true;
    this.cancel?.();
    this.cancel = undefined;
    this.held.clear();
    this.settledHandles.clear();
  }

  private schedule(): void {
    if (this.cancel || this.closed || this.held.size === 0) return;
    this.cancel = this.opts.clock.setTimer(this.everyMs / 4, () => {
      this.cancel = undefined;
      this.round();
      this.schedule();
    });
  }

  private round(): void {
    const now = this.opts.clock.now();
    for (const [id, held] of this.held) {
      if (now >= held.until) {
        this.held.delete(id);
        continue;
      }
      if (now < held.renewAt || held.inFlight) continue;
      held.renewAt = now + this.everyMs;
      held.inFlight = held
        .renew(held.handle)
        .then(
          (handle) => {
            if (typeof handle === 'string' && handle !== '') held.handle = handle;
          },
          () => undefined,
        )
        .finally(() => (held.inFlight = undefined));
    }
  }
}

type Rpc = (endpoints: unknown, request: unknown, timeout: number) => Promise<unknown>;

/**
 * Ends a message's renewals whenever the client settles it, whatever the path: the ack or
 * Suspend after a handler, and the Suspends client 1.0.8's lite FIFO service sends on its own
 * for the messages behind a suspended one in the same received batch, which never reach a
 * handler. Renewed on, each of those held its LiteTopic shut for another invisible time past
 * the Suspend's end, returning on the renewal round's grid. The settle goes out once a renewal
 * on its way is answered, and with the receipt handle the last renewal got: the proxy refuses a
 * handle past its own invisible time ("receipt handle is expired"), so a message held longer
 * than the first 60 s could not be acked with the one received and came back. A renewal itself
 * (`suspend` off) passes untouched. Wraps the consumer's RPC methods (not public API); false
 * when it lacks one.
 */
export function endRenewalsOnSettle(
  consumer: object,
  settled: (messageId: string) => Promise<string | undefined>,
): boolean {
  const target = consumer as Record<string, unknown>;
  const wrapped = [
    wrapSettle(target, 'ackMessageViaRpc', settled, () => true),
    wrapSettle(target, 'forwardMessageToDeadLetterQueueViaRpc', settled, () => true),
    wrapSettle(
      target,
      'changeInvisibleDurationViaRpc',
      settled,
      (request) => (request as { getSuspend?: () => boolean }).getSuspend?.() === true,
    ),
  ];
  return wrapped.every(Boolean);
}

function wrapSettle(
  target: Record<string, unknown>,
  method: string,
  settled: (messageId: string) => Promise<string | undefined>,
  settles: (request: unknown) => boolean,
): boolean {
  const original = target[method];
  if (typeof original !== 'function') return false;
  const rpc = original as Rpc;
  target[method] = async (endpoints: unknown, request: unknown, timeout: number) => {
    let id: string | undefined;
    try {
      id = settles(request) ? messageIdOf(request) : undefined;
    } catch {
      // Observing must never change what the client sends.
    }
    if (id !== undefined) {
      const handle = await settled(id);
      if (handle !== undefined) withHandle(request, handle);
    }
    return rpc.call(target, endpoints, request, timeout);
  };
  return true;
}

interface HandleHolder {
  setReceiptHandle?(handle: string): unknown;
}

/** Puts `handle` in a settle request: an ack's one entry, or the request itself. */
function withHandle(request: unknown, handle: string): void {
  const r = request as HandleHolder & { getEntriesList?: () => HandleHolder[] };
  const entries = typeof r.getEntriesList === 'function' ? r.getEntriesList() : undefined;
  if (entries) {
    if (entries.length === 1) entries[0]!.setReceiptHandle?.(handle);
    return;
  }
  r.setReceiptHandle?.(handle);
}

/** The parts of rocketmq-client-nodejs 1.0.8's push consumer a renewal uses (not public API). */
interface RenewingConsumer {
  wrapChangeInvisibleDurationRequest(view: unknown, invisibleMs: number): RenewRequest;
  changeInvisibleDurationViaRpc(endpoints: unknown, request: unknown, timeout: number): Promise<unknown>;
  readonly requestTimeoutValue: number;
}

interface RenewRequest {
  setSuspend(suspend: boolean): unknown;
  setReceiptHandle?(handle: string): unknown;
}

/**
 * How `consumer` extends one received message's invisible time by `INVISIBLE_MS`, or
 * undefined when the client lacks what it takes (a different version). The request is the
 * one the client builds for a Suspend (parent topic, LiteTopic, the handle it received, or
 * the newer one given) with `suspend` off; it goes through the consumer's own RPC method, so
 * settle-retry.ts reports and retries a refused one like the client's. Resolves to the
 * receipt handle the proxy answered with, undefined if it refused.
 */
export function invisibleRenewer(
  consumer: object,
): ((view: { readonly endpoints: unknown }, handle?: string) => Promise<string | undefined>) | undefined {
  const c = consumer as Partial<RenewingConsumer>;
  if (
    typeof c.wrapChangeInvisibleDurationRequest !== 'function' ||
    typeof c.changeInvisibleDurationViaRpc !== 'function'
  )
    return undefined;
  const client = c as RenewingConsumer;
  return async (view, handle) => {
    const request = client.wrapChangeInvisibleDurationRequest(view, INVISIBLE_MS) as RenewRequest;
    request.setSuspend(false);
    if (handle !== undefined) request.setReceiptHandle?.(handle);
    const response = (await client.changeInvisibleDurationViaRpc(
      view.endpoints,
      request,
      client.requestTimeoutValue,
    )) as { getReceiptHandle?(): string } | undefined;
    if (statusOf(response)?.code !== OK) return undefined;
    const next = response?.getReceiptHandle?.();
    return next ? next : undefined;
  };
}
