/**
 * Ends a lite Suspend early.
 *
 * rocketmq-client-nodejs applies a Suspend as a ChangeInvisibleDuration with `suspend` set,
 * and the proxy's answer carries the message's new receipt handle. Another
 * ChangeInvisibleDuration on that handle with a short duration resumes the LiteTopic at once:
 * on 5.5.0 a 30 s Suspend ended 45 ms after it, the LiteTopic's next message right behind
 * (test/lib/queue/conformance.ts, "a recalled Suspend"). A handle that is no longer valid
 * (the message came back on its own) is accepted there and changes nothing; PendingRecalls
 * voids such a recall anyway.
 *
 * The client keeps no handle and offers no hook, so the RPC method its process queues call
 * is wrapped on the instance, as settle-retry.ts does. Installed before that wrapper, a
 * recall goes to the proxy once: a refused one is not tried again.
 */
import type { Recall } from '../types.js';
import { OK } from './settle-retry.js';

type Rpc = (endpoints: unknown, request: unknown, timeout: number) => Promise<unknown>;

/** The parts of the client's ChangeInvisibleDuration request and response read here. */
interface Duration {
  clone(): Duration;
  getSeconds?(): number;
  getNanos?(): number;
  setSeconds(seconds: number): Duration;
  setNanos(nanos: number): Duration;
}
interface Request {
  clone(): Request;
  getSuspend?(): boolean;
  getMessageId(): string;
  getInvisibleDuration(): Duration | undefined;
  setInvisibleDuration(d: Duration): Request;
  setReceiptHandle(handle: string): Request;
}
interface Response {
  getStatus?(): { getCode(): number } | undefined;
  getReceiptHandle?(): string;
}

/**
 * Calls `applied` with a recall for every Suspend the proxy accepted, and how long it asked
 * (undefined when the request does not say). False when the client has no such method (a
 * different version): Suspends then simply run their course.
 */
export function observeSuspends(
  consumer: object,
  applied: (messageId: string, recall: (resumeInMs: number) => Promise<boolean>, suspendedMs?: number) => void,
): boolean {
  const target = consumer as Record<string, unknown>;
  const original = target.changeInvisibleDurationViaRpc;
  if (typeof original !== 'function') return false;
  const rpc = original as Rpc;
  target.changeInvisibleDurationViaRpc = async (endpoints: unknown, request: unknown, timeout: number) => {
    const response = await rpc.call(target, endpoints, request, timeout);
    try {
      const req = request as Request;
      const res = response as Response;
      const handle = res.getReceiptHandle?.();
      if (req.getSuspend?.() && res.getStatus?.()?.getCode() === OK && handle) {
        applied(
          req.getMessageId(),
          (resumeInMs) => resend(rpc, target, endpoints, req, handle, resumeInMs, timeout),
          durationMs(req.getInvisibleDuration()),
        );
      }
    } catch {
      // Observing must never change what the client sees.
    }
    return response;
  };
  return true;
}

function durationMs(d: Duration | undefined): number | undefined {
  const seconds = d?.getSeconds?.();
  const nanos = d?.getNanos?.() ?? 0;
  return typeof seconds === 'number' ? seconds * 1000 + Math.round(nanos / 1e6) : undefined;
}

async function resend(
  rpc: Rpc,
  target: object,
  endpoints: unknown,
  suspend: Request,
  handle: string,
  resumeInMs: number,
  timeout: number,
): Promise<boolean> {
  try {
    const duration = suspend.getInvisibleDuration()?.clone();
    if (!duration) return false;
    const ms = Math.max(0, Math.round(resumeInMs));
    duration.setSeconds(Math.floor(ms / 1000)).setNanos((ms % 1000) * 1_000_000);
    const request = suspend.clone().setReceiptHandle(handle).setInvisibleDuration(duration);
    const response = (await rpc.call(target, endpoints, request, timeout)) as Response;
    return response.getStatus?.()?.getCode() === OK;
  } catch {
    return false;
  }
}

/**
 * Recalls by message id: asked for with a Suspend, handed out once the proxy accepted it, void
 * once the message is in hand again (a stale handle is accepted by the proxy and changes
 * nothing, tried on 5.5.0, but a recall should say so). Bounded, oldest dropped first.
 */
export class PendingRecalls {
  private readonly pending = new Map<string, (recall: Recall) => void>();
  /** The Suspend in place now, per message: a recall of an earlier one does nothing. */
  private readonly live = new Map<string, symbol>();

  constructor(private readonly max = 10_000) {}

  /** `onRecallable` is told the recall once the Suspend of `messageId` is in place. */
  expect(messageId: string, onRecallable: (recall: Recall) => void): void {
    bounded(this.pending, messageId, onRecallable, this.max);
  }

  /** The Suspend of `messageId` is in place; `resume` ends it. */
  applied(messageId: string, resume: Recall): void {
    const onRecallable = this.pending.get(messageId);
    if (!onRecallable) return; // a sibling the client paused with it, or one not asked to be recallable
    this.pending.delete(messageId);
    const token = Symbol(messageId);
    bounded(this.live, messageId, token, this.max);
    try {
      onRecallable(async () => {
        if (this.live.get(messageId) !== token) return false;
        this.live.delete(messageId);
        return resume();
      });
    } catch {
      // The handler's bookkeeping must not break the client's settle.
    }
  }

  /** The message is in hand again: its last Suspend is over. */
  forget(messageId: string): void {
    this.pending.delete(messageId);
    this.live.delete(messageId);
  }
}

function bounded<V>(map: Map<string, V>, key: string, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}
