import type { Envelope } from '../envelope.js';

/** Where envelopes that failed for good or expired go, each with its reason. */
export interface DeadLetterSink {
  put(envelope: Envelope, reason: string): Promise<void>;
}
