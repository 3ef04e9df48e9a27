import type { Envelope } from '../envelope.js';

/** Where envelopes that failed for good or expired go, each with its reason. */
export interface DeadLetterSink {
  put(envelope: Envelope, reason: string): Promise<void>;
}

/** What the dispatcher did with one delivery; telemetry and the lab listen to these. */
export type DispatchEvent =
  | { readonly type: 'suspended'; readonly envelope: Envelope; readonly ms: number; readonly cause: 'pace' | 'capacity' | 'paused' }
  /** `slotWaitMs`: of the queue wait, the time spent in flow control waiting for a GPU slot. */
  | { readonly type: 'started'; readonly envelope: Envelope; readonly queueWaitMs: number; readonly slotWaitMs?: number }
  | { readonly type: 'completed'; readonly envelope: Envelope; readonly status: number; readonly totalMs: number }
  | { readonly type: 'retrying'; readonly envelope: Envelope; readonly attempt: number; readonly reason: string }
  | { readonly type: 'failed'; readonly envelope: Envelope; readonly status: number; readonly reason: string }
  | { readonly type: 'expired'; readonly envelope: Envelope }
  /** Congestion control changed a model's pace multiplier. */
  | { readonly type: 'congestion'; readonly model: string; readonly factor: number };
