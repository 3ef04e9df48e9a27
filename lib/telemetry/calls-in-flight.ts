/**
 * GPU calls started and not yet finished, per request: the slots in use per model and
 * tier that the dashboard and the gauges show, and whether each call had waited long
 * enough to count as absorbed when it completes. Bounded: past `maxCalls`, calls older
 * than ten minutes (their end was never seen: a dispatcher died) are dropped, and if
 * that is not enough, all.
 */
import type { Clock } from '../clock/clock.js';

export interface CallInFlight {
  readonly tier: string;
  readonly model: string;
  /** It waited in its LiteTopic at least the absorb threshold before it started. */
  readonly held: boolean;
}

interface Entry extends CallInFlight {
  readonly at: number;
}

const STALE_MS = 10 * 60_000;

export class CallsInFlight {
  private readonly calls = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly maxCalls = 100_000,
  ) {}

  started(id: string, call: CallInFlight): void {
    if (this.calls.size >= this.maxCalls) this.prune();
    this.calls.set(id, { ...call, at: this.clock.now() });
  }

  /** The call of request `id` ended (completed, failed or retried); what it was, if it was seen to start. */
  ended(id: string): CallInFlight | undefined {
    const call = this.calls.get(id);
    this.calls.delete(id);
    return call;
  }

  /** Model → tier → calls in flight. */
  slotsInUse(): Map<string, Map<string, number>> {
    const byModel = new Map<string, Map<string, number>>();
    for (const f of this.calls.values()) {
      const m = byModel.get(f.model) ?? new Map<string, number>();
      m.set(f.tier, (m.get(f.tier) ?? 0) + 1);
      byModel.set(f.model, m);
    }
    return byModel;
  }

  private prune(): void {
    const cutoff = this.clock.now() - STALE_MS;
    for (const [id, f] of this.calls) if (f.at < cutoff) this.calls.delete(id);
    if (this.calls.size >= this.maxCalls) this.calls.clear();
  }
}
