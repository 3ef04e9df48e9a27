/**
 * Bounds how many handlers run at once. rocketmq-client-nodejs ignores its
 * consumption thread count (one event loop), and with the FIFO accelerator it starts
 * every LiteTopic of a received batch at once, so the bound has to be ours.
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {
    if (!(limit >= 1)) throw new Error('concurrency must be at least 1');
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays put.
      if (next) next();
      else this.active--;
    }
  }

  get running(): number {
    return this.active;
  }

  /** Callers waiting for a place. */
  get queued(): number {
    return this.waiting.length;
  }
}
