import type { Clock } from '../../lib/clock/clock.js';

export interface Lease {
  /** Milliseconds the request waited in the queue before it got this slot. */
  readonly queuedMs: number;
  /**
   * Whether it waited in the queue at all. On a wall clock queuedMs alone cannot say: a
   * request granted at once could read 1 ms when the clock ticked between two reads, and
   * one handed a slot within the millisecond it queued reads 0.
   */
  readonly queued: boolean;
  /** Gives the slot back (to the head of the queue if anyone waits); safe to call twice. */
  release(): void;
}

export type Acquired =
  { ok: true; lease: Lease } | { ok: false; reason: 'queue_full' | 'queue_timeout' | 'aborted' | 'closed' };

interface Waiter {
  enqueuedAt: number;
  /** Lower first (vLLM's convention); equal priorities keep arrival order. */
  priority: number;
  settle(result: Acquired): void;
}

export type QueuePolicy = 'fcfs' | 'priority';

export interface SlotPoolOptions {
  clock: Clock;
  slots: number;
  /** Most waiters; null: unbounded. */
  queueLimit: number | null;
  /** Longest wait before `queue_timeout`; null: no limit (the client's own timeout, through its signal). */
  maxQueueWaitMs: number | null;
  /** Order of the waiting queue; default `fcfs`. */
  policy?: QueuePolicy;
  /** First guess of how long a slot is held, used for Retry-After until real ones are seen. */
  initialHoldMs: number;
}

/**
 * The GPU's batch: a fixed number of sequences run at once, the rest wait in a queue,
 * bounded or not. A freed slot goes straight to the head of the queue, so a newcomer
 * can never overtake someone already waiting, except, under the `priority` policy, one
 * of a lower priority. Running sequences are never preempted: the simulator has no
 * KV-cache pressure, the only reason vLLM's priority scheduler evicts a running one.
 */
export class SlotPool {
  private readonly clock: Clock;
  private readonly slots: number;
  private readonly queueLimit: number;
  private readonly maxQueueWaitMs: number | null;
  private readonly policy: QueuePolicy;
  private waiters: Waiter[] = [];
  private closed = false;
  private busyCount = 0;
  private avgHoldMs: number;
  private lastChange: number;
  private busyMs = 0;
  peakBusy = 0;
  peakQueue = 0;

  constructor(options: SlotPoolOptions) {
    this.clock = options.clock;
    this.slots = options.slots;
    this.queueLimit = options.queueLimit ?? Infinity;
    this.maxQueueWaitMs = options.maxQueueWaitMs;
    this.policy = options.policy ?? 'fcfs';
    this.avgHoldMs = options.initialHoldMs;
    this.lastChange = options.clock.now();
  }

  get busy(): number {
    return this.busyCount;
  }

  get capacity(): number {
    return this.slots;
  }

  get queueLength(): number {
    return this.waiters.length;
  }

  /** Slot-milliseconds spent busy so far; divided by elapsed × slots it is the utilization. */
  busySlotMs(): number {
    return this.busyMs + this.busyCount * (this.clock.now() - this.lastChange);
  }

  /** `priority` orders the queue under the `priority` policy only. */
  acquire(signal?: AbortSignal, priority = 0): Promise<Acquired> {
    if (this.closed) return Promise.resolve({ ok: false, reason: 'closed' });
    if (signal?.aborted) return Promise.resolve({ ok: false, reason: 'aborted' });
    if (this.busyCount < this.slots && this.waiters.length === 0) {
      return Promise.resolve({ ok: true, lease: this.grant(this.clock.now(), false) });
    }
    if (this.waiters.length >= this.queueLimit) {
      return Promise.resolve({ ok: false, reason: 'queue_full' });
    }
    return new Promise<Acquired>((resolve) => {
      const waiter: Waiter = {
        enqueuedAt: this.clock.now(),
        priority: this.policy === 'priority' ? priority : 0,
        settle: (result) => {
          cancelTimer();
          signal?.removeEventListener('abort', onAbort);
          resolve(result);
        },
      };
      const leave = (reason: 'queue_timeout' | 'aborted') => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        waiter.settle({ ok: false, reason });
      };
      const onAbort = () => leave('aborted');
      const cancelTimer =
        this.maxQueueWaitMs === null
          ? () => {}
          : this.clock.setTimer(this.maxQueueWaitMs, () => leave('queue_timeout'));
      signal?.addEventListener('abort', onAbort, { once: true });
      this.enqueue(waiter);
      this.peakQueue = Math.max(this.peakQueue, this.waiters.length);
    });
  }

  /**
   * Seconds a newcomer would wait for a slot given the current queue and the recent
   * average hold time: what a well-behaved server puts in Retry-After.
   */
  retryAfterS(maxS: number): number {
    const waitMs = ((this.waiters.length + 1) / this.slots) * this.avgHoldMs;
    return Math.min(maxS, Math.max(1, Math.ceil(waitMs / 1000)));
  }

  /** Refuses everything waiting and everything later; slots held now are released by their owners. */
  close(): void {
    this.closed = true;
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w.settle({ ok: false, reason: 'closed' });
  }

  private grant(enqueuedAt: number, queued: boolean): Lease {
    this.setBusy(this.busyCount + 1);
    this.peakBusy = Math.max(this.peakBusy, this.busyCount);
    const start = queued ? this.clock.now() : enqueuedAt;
    let released = false;
    return {
      queuedMs: start - enqueuedAt,
      queued,
      release: () => {
        if (released) return;
        released = true;
        // Weight 0.2: follows a change in load within a handful of requests without jitter.
        this.avgHoldMs = 0.8 * this.avgHoldMs + 0.2 * (this.clock.now() - start);
        this.setBusy(this.busyCount - 1);
        this.handOver();
      },
    };
  }

  /** Behind every waiter of the same or a more urgent priority: arrival order within a priority. */
  private enqueue(waiter: Waiter): void {
    const w = this.waiters;
    if (w.length === 0 || w[w.length - 1]!.priority <= waiter.priority) {
      w.push(waiter);
      return;
    }
    let lo = 0;
    let hi = w.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (w[mid]!.priority <= waiter.priority) lo = mid + 1;
      else hi = mid;
    }
    w.splice(lo, 0, waiter);
  }

  private handOver(): void {
    while (this.busyCount < this.slots && this.waiters.length > 0) {
      const next = this.waiters.shift()!;
      next.settle({ ok: true, lease: this.grant(next.enqueuedAt, true) });
    }
  }

  private setBusy(n: number): void {
    const now = this.clock.now();
    this.busyMs += this.busyCount * (now - this.lastChange);
    this.lastChange = now;
    this.busyCount = n;
  }
}
