/**
 * How busy the GPU was while requests waited for a slot: the "GPU busy
 * whenever eligible work waits". Averaged over a whole burst, utilization also
 * counts the stretches when the only work left is held by its pace or its quota,
 * which no scheduler may start; this counts only the stretches when some request
 * was paced, admitted, and still had no slot: waiting in flow control, or sent back
 * from a full room to its LiteTopic (it waits there for a slot all the same).
 *
 * Exact, not sampled: the GPU's busy slot-time is read at each moment the stretch
 * changes: requests start or stop waiting, or the last one in a room is sent back
 * (or one returns), which moves the stretch between the two kinds idleShares() splits.
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

  /**
   * The GPU's idle slot-time while requests waited, as a share of all the slot-time they waited,
   * split by where they were: with some in a room, slots idle there are held back by the
   * scheduler (a lender's headroom) or lost between a release and the next call; with every one
   * sent back, the room had nothing to start. The two add up to 1 - utilization().
   */
  idleShares(): Record<WaitedWhere, number> | null {
    const idle = { room: 0, sentBack: 0 };
    let slotMs = 0;
    for (const m of this.models.values()) {
      m.flush();
      for (const where of ['room', 'sentBack'] as const) {
        idle[where] += m.by[where].slotMs - m.by[where].busySlotMs;
        slotMs += m.by[where].slotMs;
      }
    }
    if (slotMs === 0) return null;
    const share = (x: number) => Math.round((x / slotMs) * 1000) / 1000;
    return { room: share(idle.room), sentBack: share(idle.sentBack) };
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

/** Where the waiting requests were: some in a room (flow control), or every one sent back to its LiteTopic. */
export type WaitedWhere = 'room' | 'sentBack';

interface Stretch {
  busySlotMs: number;
  slotMs: number;
}

class ModelMeter {
  private readonly inRoom = new Set<string>();
  private readonly sentBack = new Set<string>();
  private since: { at: number; busySlotMs: number; where: WaitedWhere } | undefined;
  readonly by: Record<WaitedWhere, Stretch> = {
    room: { busySlotMs: 0, slotMs: 0 },
    sentBack: { busySlotMs: 0, slotMs: 0 },
  };

  constructor(
    private readonly pool: MeteredPool,
    private readonly now: () => number,
  ) {}

  get busySlotMs(): number {
    return this.by.room.busySlotMs + this.by.sentBack.busySlotMs;
  }

  get slotMs(): number {
    return this.by.room.slotMs + this.by.sentBack.slotMs;
  }

  observe(event: DispatchEvent & { envelope: { id: string } }): void {
    const id = event.envelope.id;
    if (event.type === 'awaiting-slot') {
      this.sentBack.delete(id);
      this.inRoom.add(id);
    } else if (event.type === 'suspended' && event.cause === 'capacity') {
      if (!this.inRoom.delete(id)) return;
      this.sentBack.add(id);
    } else if (leaves(event)) {
      if (!this.inRoom.delete(id) && !this.sentBack.delete(id)) return;
    } else return;
    if (this.where() !== this.since?.where) this.restart();
  }

  /** Counts the stretch in progress so far, and goes on counting. */
  flush(): void {
    this.restart();
  }

  private where(): WaitedWhere | undefined {
    return this.inRoom.size > 0 ? 'room' : this.sentBack.size > 0 ? 'sentBack' : undefined;
  }

  private restart(): void {
    const now = this.now();
    const busy = this.pool.busySlotMs();
    if (this.since) {
      const s = this.by[this.since.where];
      s.busySlotMs += busy - this.since.busySlotMs;
      s.slotMs += (now - this.since.at) * this.pool.slots;
    }
    const where = this.where();
    this.since = where === undefined ? undefined : { at: now, busySlotMs: busy, where };
  }
}
