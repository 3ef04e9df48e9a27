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

  /** Runs `fn` once a place is free; `fn` may give its place back early (`release`) and go on. */
  async run<T>(fn: (release: () => void) => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let held = true;
    const release = () => {
      if (!held) return;
      held = false;
      const next = this.waiting.shift();
      // The place passes straight to the next waiter, so `active` stays put.
      if (next) next();
      else this.active--;
    };
    try {
      return await fn(release);
    } finally {
      release();
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
