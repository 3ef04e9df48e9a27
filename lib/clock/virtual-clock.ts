import type { Clock } from './clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. Timers fire in (time, creation) order, and
 * between timers the microtask queue is drained so async code reacts the way it
 * would on the wall clock, only without waiting.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer: Timer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.insert(timer);
    return () => {
      const i = this.timers.indexOf(timer);
      if (i >= 0) this.timers.splice(i, 1);
    };
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer due on the way. */
  async advance(ms: number): Promise<void> {
    await this.runUntil(this.current + ms);
  }

  /** Fires timers due up to `until`, then sets the clock to `until`. */
  async runUntil(until: number): Promise<void> {
    await settle();
    for (;;) {
      const next = this.timers[0];
      if (!next || next.at > until) break;
      this.timers.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = Math.max(this.current, until);
  }

  private insert(timer: Timer): void {
    // Binary search keeps insertion O(log n) for the thousands of timers a scenario makes.
    let lo = 0;
    let hi = this.timers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.timers[mid]!;
      if (t.at < timer.at || (t.at === timer.at && t.seq < timer.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.timers.splice(lo, 0, timer);
  }
}

/** Lets pending promise chains run to completion before the next timer fires. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
  await new Promise<void>((r) => setImmediate(r));
}
