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

export class EligibleBusy {
  private readonly waiting = new Set<string>();
  private since: { at: number; busySlotMs: number } | undefined;
  private busySlotMs = 0;
  private slotMs = 0;

  /** `busySlotMs`: the GPU's busy slot-time so far. */
  constructor(
    private readonly slots: number,
    private readonly busyNow: () => number,
    private readonly now: () => number,
  ) {}

  observe(event: DispatchEvent): void {
    if (!('envelope' in event)) return;
    const id = event.envelope.id;
    if (event.type === 'awaiting-slot') {
      if (this.waiting.size === 0) this.since = { at: this.now(), busySlotMs: this.busyNow() };
      this.waiting.add(id);
    } else if (leaves(event) && this.waiting.delete(id) && this.waiting.size === 0) this.close();
  }

  private close(): void {
    if (!this.since) return;
    this.busySlotMs += this.busyNow() - this.since.busySlotMs;
    this.slotMs += (this.now() - this.since.at) * this.slots;
    this.since = undefined;
  }

  /** Busy slot-time over slot-time while requests waited for a slot; null when none ever waited. */
  utilization(): number | null {
    if (this.waiting.size > 0) {
      this.close();
      this.since = { at: this.now(), busySlotMs: this.busyNow() };
    }
    return this.slotMs > 0 ? Math.round((this.busySlotMs / this.slotMs) * 1000) / 1000 : null;
  }

  /** Time during which requests waited for a slot, ms. */
  waitedMs(): number {
    return this.slotMs / this.slots;
  }
}
