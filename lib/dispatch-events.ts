/**
 * What a dispatcher reports as it handles deliveries: plain event types, no behaviour, so
 * the listeners (telemetry, the lab) import them without importing the dispatcher.
 */
import type { Envelope } from './envelope.js';

/** What the dispatcher did with one delivery. */
export type DispatchEvent =
  /**
   * A delivery reached the dispatcher. `first`: the broker's first delivery of the message as far as
   * this dispatcher knows (a message suspended by another dispatcher looks first here). `parkedMs`:
   * time since this dispatcher sent the message back, and why (`parkedBy`).
   */
  | {
      readonly type: 'delivered';
      readonly envelope: Envelope;
      readonly attempt: number;
      readonly first: boolean;
      readonly sinceEnqueueMs: number;
      readonly parkedMs?: number;
      readonly parkedBy?: ParkCause;
    }
  /** `heldMs` (cause capacity): time it waited in flow control for a slot before it was sent back. */
  | {
      readonly type: 'suspended';
      readonly envelope: Envelope;
      readonly ms: number;
      readonly cause: SuspendCause;
      readonly heldMs?: number;
    }
  /** Paced; now waiting in flow control for a GPU slot. */
  | { readonly type: 'awaiting-slot'; readonly envelope: Envelope }
  /** `slotWaitMs`: of the queue wait, the time spent in flow control waiting for a GPU slot. */
  | {
      readonly type: 'started';
      readonly envelope: Envelope;
      readonly queueWaitMs: number;
      readonly slotWaitMs?: number;
    }
  /** `upstreamMs`: the GPU call; `firstTokenMs`: from the call to its first stream chunk (streams only). */
  | {
      readonly type: 'completed';
      readonly envelope: Envelope;
      readonly status: number;
      readonly totalMs: number;
      readonly upstreamMs?: number;
      readonly firstTokenMs?: number;
    }
  | { readonly type: 'retrying'; readonly envelope: Envelope; readonly attempt: number; readonly reason: string }
  | { readonly type: 'failed'; readonly envelope: Envelope; readonly status: number; readonly reason: string }
  | { readonly type: 'expired'; readonly envelope: Envelope }
  /** Congestion control changed a model's pace multiplier. */
  | { readonly type: 'congestion'; readonly model: string; readonly factor: number }
  /** The model's slots changed, as its servers' metrics said (flow/saturation.ts). */
  | { readonly type: 'capacity'; readonly model: string; readonly slots: number; readonly reason: CapacityReason };

/** Why a delivery went back to its LiteTopic with a Suspend. */
export type SuspendCause = 'pace' | 'capacity' | 'paused';
/** Why a message was away from the dispatcher between two deliveries: a Suspend's cause, a failure's backoff, or a store outage. */
export type ParkCause = SuspendCause | 'retry' | 'other';

/** Why the slots changed: the engine queued, its cache filled, a probe up, unreadable metrics. */
export type CapacityReason = 'engine-queue' | 'kv-cache' | 'probe' | 'unreadable';
