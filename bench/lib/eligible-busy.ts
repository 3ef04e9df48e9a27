/**
 * How busy the GPU was while requests waited for a slot: the "GPU busy
 * whenever eligible work waits". Averaged over a whole burst, utilization also
 * counts the stretches when the only work left is held by its pace or its quota,
 * which no scheduler may start; this counts only the stretches when some request
 * was paced, admitted, and still had no slot: waiting in flow control, or sent back
 * from a full room to its LiteTopic (it waits there for a slot all the same).
 *
 * Exact, not sampled: the GPU's busy slot-time is read at each moment the set of
 * waiting requests turns non-empty or empty again.
 */
import type { DispatchEvent } from '../../lib/dispatch-events.js';

/** Events after which a request no longer waits for a slot. */
const LEFT = new Set<DispatchEvent['type']>(['started', 'suspended', 'expired', 'failed', 'completed']);

/** Sent back from a full room, a request still waits for a slot, in its LiteTopic. */
const leaves = (event: DispatchEvent) =>
  LEFT.has(event.type) && !(event.type === 'suspended' && event.cause === 'capacity');

/** One model's pool as the meter reads it: its slots, and its busy slot-time so far. */
export interface MeteredPool {
  readonly slots: number;
  busySlotMs(): number;
}

/**
 * Per model: a request waits for its own model's slots, so only its pool counts while it
 * waits (models on pools of their own, gpu-pools.ts). The figures add up over the models.
 */
export class EligibleBusy {
  private readonly models = new Map<string, ModelMeter>();

  constructor(
    private readonly pools: ReadonlyMap<string, MeteredPool>,
    private readonly now: () => number,
  ) {}

  observe(event: DispatchEvent): void {
    if (!('envelope' in event)) return;
    const model = event.envelope.model;
    let meter = this.models.get(model);
    if (!meter) {
      const pool = this.pools.get(model);
      if (!pool) return;
      meter = new ModelMeter(pool, this.now);
      this.models.set(model, meter);
    }
    meter.observe(event);
  }

  /** Busy slot-time over slot-time while requests waited for a slot; null when none ever waited. */
  utilization(): number | null {
    let busy = 0;
    let slotMs = 0;
    for (const m of this.models.values()) {
      m.flush();
      busy += m.busySlotMs;
      slotMs += m.slotMs;
    }
    return slotMs > 0 ? Math.round((busy / slotMs) * 1000) / 1000 : null;
  }

  /** Time during which requests waited for a slot, ms; with several pools, weighted by their slots. */
  waitedMs(): number {
    let slotMs = 0;
    let slots = 0;
    for (const pool of this.pools.values()) slots += pool.slots;
    for (const m of this.models.values()) slotMs += m.slotMs;
    return slots > 0 ? slotMs / slots : 0;
  }
}

class ModelMeter {
  private readonly waiting = new Set<string>();
  private since: { at: number; busySlotMs: number } | undefined;
  busySlotMs = 0;
  slotMs = 0;

  constructor(
    private readonly pool: MeteredPool,
    private readonly now: () => number,
  ) {}

  observe(event: DispatchEvent & { envelope: { id: string } }): void {
    const id = event.envelope.id;
    if (event.type === 'awaiting-slot') {
      if (this.waiting.size === 0) this.since = { at: this.now(), busySlotMs: this.pool.busySlotMs() };
      this.waiting.add(id);
    } else if (leaves(event) && this.waiting.delete(id) && this.waiting.size === 0) this.close();
  }

  /** Counts the stretch in progress so far, and goes on counting. */
  flush(): void {
    if (this.waiting.size === 0) return;
    this.close();
    this.since = { at: this.now(), busySlotMs: this.pool.busySlotMs() };
  }

  private close(): void {
    if (!this.since) return;
    this.busySlotMs += this.pool.busySlotMs() - this.since.busySlotMs;
    this.slotMs += (this.now() - this.since.at) * this.pool.slots;
    this.since = undefined;
  }
}
