import type { FaultStatus } from './options.js';

export interface Fault {
  status: FaultStatus;
  /** Seconds for Retry-After on 429/503; undefined for 5xx without it. */
  retryAfterS?: number;
}

/**
 * Decides which inference requests fail on purpose. Queued one-shot faults
 * (`failNext`) come first; then a steady rate, spread evenly by an accumulator so
 * that the failures land on the same requests every run.
 */
export class FaultInjector {
  private queued: Fault[] = [];
  private rate: number;
  private rateStatus: FaultStatus;
  private acc = 0;
  private slowdownFactor = 1;

  constructor(rate: number, status: FaultStatus) {
    this.rate = rate;
    this.rateStatus = status;
  }

  /** The next `count` inference requests answer `status` at once, without taking a slot. */
  failNext(status: FaultStatus, count = 1, retryAfterS?: number): void {
    for (let i = 0; i < count; i++) this.queued.push({ status, retryAfterS });
  }

  /** A fraction in [0, 1] of later requests fails with `status`. */
  setFailureRate(rate: number, status: FaultStatus = this.rateStatus): void {
    if (!(rate >= 0 && rate <= 1)) throw new RangeError('failure rate must be within [0, 1]');
    this.rate = rate;
    this.rateStatus = status;
    this.acc = 0;
  }

  /**
   * Multiplies every generation's duration, to mimic a degraded GPU (thermal throttling,
   * a noisy neighbour) so congestion control can be tested against latency growth alone.
   */
  setSlowdown(factor: number): void {
    if (!(factor > 0)) throw new RangeError('slowdown factor must be positive');
    this.slowdownFactor = factor;
  }

  get slowdown(): number {
    return this.slowdownFactor;
  }

  /** Clears queued faults, the rate and the slowdown. */
  reset(): void {
    this.queued = [];
    this.rate = 0;
    this.acc = 0;
    this.slowdownFactor = 1;
  }

  /** Called once per inference request; returns the fault to answer with, if any. */
  draw(): Fault | undefined {
    const next = this.queued.shift();
    if (next) return next;
    if (this.rate <= 0) return undefined;
    this.acc += this.rate;
    if (this.acc >= 1 - 1e-9) {
      this.acc -= 1;
      return { status: this.rateStatus };
    }
    return undefined;
  }
}
