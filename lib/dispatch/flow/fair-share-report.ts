/**
 * What this dispatcher knows for its fair-share reports (lib/limits/fair-share.ts): how long
 * the calls of each model and tier hold a slot, and how many requests each waiting flow's
 * LiteTopic holds (its reservoir, read before each report, those read longest ago first).
 */
import { REPORT_EVERY_MS } from '../../limits/fair-share.js';

/** Weight of a new call in the moving mean of call times: about the last 20 calls. */
const CALL_WEIGHT = 0.05;
/** Depths remembered at most; the least recently read go first. */
const MAX_DEPTHS = 10_000;

export class FairShareReport {
  /** Per model and tier, and per model: the mean slot time of calls, moving. */
  private readonly callMs = new Map<string, number>();
  private readonly reportedAt = new Map<string, number>();
  /** Per reservoir: what it held when last read. */
  private readonly depths = new Map<string, { queued: number; at: number }>();
  /** Per reservoir: calls of its requests running from here, the first of its places. */
  private readonly running = new Map<string, number>();
  /** Per reservoir: the tenant whose requests it holds, to answer those shed from it. */
  private readonly tenants = new Map<string, string>();

  /** A call of `tier` held a slot of `model` for `slotMs`. */
  observe(model: string, tier: string, slotMs: number): void {
    if (!(slotMs > 0)) return;
    for (const key of [`${model}\n${tier}`, model]) {
      const prev = this.callMs.get(key);
      this.callMs.set(key, prev === undefined ? slotMs : prev + CALL_WEIGHT * (slotMs - prev));
    }
  }

  /** The tier's mean call on the model, or the model's until the tier has calls; undefined before any. */
  meanCallMs(model: string, tier: string): number | undefined {
    return this.callMs.get(`${model}\n${tier}`) ?? this.callMs.get(model);
  }

  /** The reservoir held `queued` requests at `now`. */
  noteDepth(reservoir: string, queued: number, now: number): void {
    this.depths.delete(reservoir);
    this.depths.set(reservoir, { queued, at: now });
    // Map order is insertion order, and a note re-inserts: the first entries are the least recent.
    for (const k of this.depths.keys()) {
      if (this.depths.size <= MAX_DEPTHS) break;
      this.depths.delete(k);
    }
  }

  /** A call of a request from `flow` started (+1) or ended (-1) here. */
  call(flow: string, delta: 1 | -1): void {
    const n = (this.running.get(flow) ?? 0) + delta;
    if (n > 0) this.running.set(flow, n);
    else this.running.delete(flow);
  }

  /** Calls of `flow`'s requests running from here. */
  calls(flow: string): number {
    return this.running.get(flow) ?? 0;
  }

  /** A request of `tenant` came from `reservoir`. */
  noteTenant(reservoir: string, tenant: string): void {
    this.tenants.delete(reservoir);
    this.tenants.set(reservoir, tenant);
    for (const k of this.tenants.keys()) {
      if (this.tenants.size <= MAX_DEPTHS) break;
      this.tenants.delete(k);
    }
  }

  tenant(reservoir: string): string | undefined {
    return this.tenants.get(reservoir);
  }

  depth(reservoir: string): number | undefined {
    return this.depths.get(reservoir)?.queued;
  }

  /** Of `reservoirs`, the `n` read longest ago (never read first). */
  stalest(reservoirs: Iterable<string>, n: number): string[] {
    const at = (r: string) => this.depths.get(r)?.at ?? -Infinity;
    return [...reservoirs].sort((a, b) => at(a) - at(b)).slice(0, n);
  }

  /** Whether a report of `model` is due now: REPORT_EVERY_MS after the last. Marks it made. */
  due(model: string, now: number): boolean {
    if (now - (this.reportedAt.get(model) ?? -Infinity) < REPORT_EVERY_MS) return false;
    this.reportedAt.set(model, now);
    return true;
  }
}
