/**
 * Tries again the acks and Suspends (invisible-time changes) a proxy refuses with
 * INVALID_RECEIPT_HANDLE, and reports every refusal.
 *
 * The proxy answers INVALID_RECEIPT_HANDLE both for a handle whose invisible time is over
 * and when it "cannot find broker" named in the handle: it resolves that broker through
 * its cached route of the topic named after the broker, and Caffeine's refresh-after-write
 * hands the first read after a quiet spell the stale entry. After a broker restart that
 * entry still says "not found" from the outage, so the first acks failed
 * (`npm run bench -- chaos --faults broker-down`, debug log). rocketmq-client-nodejs 1.0.8
 * forgives that code without a word; in a FIFO group the unacked message then blocks its
 * LiteTopic until its invisible time is over (60 s), and the requests behind it expired.
 * The failed call made the proxy refresh the entry, so one more a second later lands.
 * A handle that really expired is refused again, harmlessly: the broker redelivers it.
 *
 * The client offers no hook, so the two RPC methods its process queues call on the
 * consumer are wrapped on the instance, as `observeReceives` does.
 */
import { sleep, type Clock } from '../../clock/clock.js';

/** apache.rocketmq.v2.Code */
export const OK = 20_000;
const INVALID_RECEIPT_HANDLE = 40_013;

export interface SettleRefusal {
  readonly call: 'ack' | 'change-invisible-duration';
  readonly messageId: string | undefined;
  /** The proxy's status code; undefined when the call itself failed. */
  readonly code: number | undefined;
  readonly reason: string;
  /** 1 for the client's own call, then one more per retry here. */
  readonly attempt: number;
  /** Whether this adapter calls again; otherwise the client's own handling applies. */
  readonly retrying: boolean;
}

export interface SettleRetryOptions {
  readonly clock: Clock;
  /** Wait before each retry (default 1,000 ms: the proxy's reload of a route is quicker). */
  readonly retryMs?: number;
  /** Retries after the client's call (default 3). */
  readonly retries?: number;
  readonly report: (refusal: SettleRefusal) => void;
}

type Rpc = (endpoints: unknown, request: unknown, timeout: number) => Promise<unknown>;

/** False when the client has neither method (a different version). */
export function retryRefusedSettles(consumer: object, opts: SettleRetryOptions): boolean {
  const target = consumer as Record<string, unknown>;
  const wrapped = [
    wrap(target, 'ackMessageViaRpc', 'ack', opts),
    wrap(target, 'changeInvisibleDurationViaRpc', 'change-invisible-duration', opts),
  ];
  return wrapped.some(Boolean);
}

function wrap(
  target: Record<string, unknown>,
  method: string,
  call: SettleRefusal['call'],
  opts: SettleRetryOptions,
): boolean {
  const original = target[method];
  if (typeof original !== 'function') return false;
  const rpc = original as Rpc;
  const retries = opts.retries ?? 3;
  const retryMs = opts.retryMs ?? 1_000;
  target[method] = async (endpoints: unknown, request: unknown, timeout: number) => {
    for (let attempt = 1; ; attempt++) {
      let response: unknown;
      try {
        response = await rpc.call(target, endpoints, request, timeout);
      } catch (err) {
        // The client retries a call that throws on its own.
        report(opts, {
          call,
          messageId: messageIdOf(request),
          code: undefined,
          reason: err instanceof Error ? err.message : String(err),
          attempt,
          retrying: false,
        });
        throw err;
      }
      const status = statusOf(response);
      if (!status || status.code === OK) return response;
      const retrying = status.code === INVALID_RECEIPT_HANDLE && attempt <= retries;
      report(opts, {
        call,
        messageId: messageIdOf(request),
        code: status.code,
        reason: status.message ?? '',
        attempt,
        retrying,
      });
      if (!retrying) return response;
      await sleep(opts.clock, retryMs);
    }
  };
  return true;
}

function report(opts: SettleRetryOptions, refusal: SettleRefusal): void {
  try {
    opts.report(refusal);
  } catch {
    // A report must never change what the client sees.
  }
}

type Status = { code: number; message?: string };
type WithStatus = { getStatus?: () => { toObject?: () => Status } | undefined };

/** The response's status, or its first refused entry's when the response as a whole says OK. */
export function statusOf(response: unknown): Status | undefined {
  const top = readStatus(response);
  if (top && top.code !== OK) return top;
  const entries = (response as { getEntriesList?: () => unknown[] } | undefined)?.getEntriesList;
  const list = typeof entries === 'function' ? entries.call(response) : [];
  for (const entry of list) {
    const status = readStatus(entry);
    if (status && status.code !== OK) return status;
  }
  return top;
}

function readStatus(holder: unknown): Status | undefined {
  const getStatus = (holder as WithStatus | undefined)?.getStatus;
  if (typeof getStatus !== 'function') return undefined;
  return getStatus.call(holder)?.toObject?.();
}

/** The message a settle request names (an ack names its entries; the others, one message). */
export function messageIdOf(request: unknown): string | undefined {
  const r = request as
    { getEntriesList?: () => Array<{ getMessageId?: () => string }>; getMessageId?: () => string } | undefined;
  if (typeof r?.getMessageId === 'function') return r.getMessageId();
  const entries = typeof r?.getEntriesList === 'function' ? r.getEntriesList() : undefined;
  return entries?.[0]?.getMessageId?.();
}
