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
}

export interface ResultChannel {
  /** Stores the final result, then wakes whoever waits on it. */
  complete(result: StoredResult): Promise<void>;
  /** Appends one SSE data payload (without the `data: ` prefix) for a streaming request. */
  appendChunk(id: string, data: string): Promise<void>;
  /** The result if stored, else undefined. */
  get(id: string): Promise<StoredResult | undefined>;
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
