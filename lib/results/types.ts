/**
 * The result channel carries a dispatcher's answer back to the edge that admitted
 * the request: a final result, and for streaming requests the SSE chunks before
 * it. Waiting is by notification, never by polling.
 */

export type RequestStatus = 'queued' | 'running' | 'completed' | 'failed' | 'expired';

export interface StoredResult {
  readonly id: string;
  readonly tenant: string;
  readonly status: Exclude<RequestStatus, 'queued' | 'running'>;
  /** HTTP status to answer the client with. */
  readonly httpStatus: number;
  /** The upstream's JSON body, or an OpenAI-style error body. */
  readonly body: unknown;
  readonly completedAt: number;
  /**
   * A refusal the client may retry (the model cannot start it before its deadline): why, as
   * `x-sluice-reason` says it, and when to try again, as `Retry-After` says it.
   */
  readonly refusal?: { readonly reason: string; readonly retryAfterMs: number };
}

/** A request accepted for later reading (async mode) whose result is not there yet. */
export interface PendingRecord {
  readonly id: string;
  readonly tenant: string;
  readonly status: 'queued';
}

export interface ResultChannel {
  /** Records an accepted request so its status can be read before it completes. */
  track(id: string, tenant: string): Promise<void>;
  /**
   * Stores the final result, then wakes whoever waits on it. The first final
   * result stands: a later one (a redelivery, an expiry racing a completion) is
   * dropped, so a request is answered once. Resolves true when this call answered.
   * `acceptedAt`: a final result completed before it answered an earlier life of the
   * request (an operator's dead-letter redrive accepts it again) and is replaced.
   */
  complete(result: StoredResult, acceptedAt?: number): Promise<boolean>;
  /** Appends one SSE data payload (without the `data: ` prefix) for a streaming request. */
  appendChunk(id: string, data: string): Promise<void>;
  /** The result if stored, the pending record if tracked, else undefined. */
  get(id: string): Promise<StoredResult | PendingRecord | undefined>;
  /** Resolves with the result as soon as it is stored, or undefined after `timeoutMs` or on abort. */
  wait(id: string, timeoutMs: number, signal?: AbortSignal): Promise<StoredResult | undefined>;
  /**
   * Yields stream chunks in order as they arrive, then ends once the result is
   * stored (the result is returned by `get`). Ends early on abort or after
   * `idleTimeoutMs` without news.
   */
  chunks(id: string, idleTimeoutMs: number, signal?: AbortSignal): AsyncIterable<string>;
  close(): Promise<void>;
}
