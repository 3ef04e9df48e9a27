import type { Clock } from '../../lib/clock/clock.js';
import type { Envelope, ReplyMode } from '../../lib/envelope.js';
import type { Policy } from '../../lib/policy/schema.js';
import type { LiteQueue } from '../../lib/queue/types.js';
import type { ResultChannel } from '../../lib/results/types.js';
import type { RateStore } from '../../lib/store/types.js';
import type { Logger } from '../../lib/telemetry/log.js';
import type { AdminDeps } from './routes/admin.js';

/** Everything the edge needs, passed in: the same app runs in Lambda, Node and tests. */
export interface EdgeDeps {
  readonly clock: Clock;
  readonly store: RateStore;
  readonly queue: LiteQueue;
  readonly results: ResultChannel;
  readonly policy: () => Policy;
  readonly newId: () => string;
  readonly log: Logger;
  /** Told of every admission decision; telemetry and the scenario lab listen. */
  readonly onAdmission?: (event: AdmissionEvent) => void;
  readonly options?: EdgeOptions;
  /** The operators' API; left out, /admin answers 404. */
  readonly admin?: AdminDeps;
  /** Aborted when the process begins to stop: new requests get 503 `shutting_down`, before any charge. */
  readonly stopTaking?: AbortSignal;
  /** Aborted when the process stops waiting: clients still waiting get 503 `shutting_down` at once. */
  readonly stopWaiting?: AbortSignal;
}

export interface AdmissionEvent {
  readonly outcome: 'admitted' | 'rejected';
  readonly account: string;
  readonly tenant: string;
  readonly tier: string;
  readonly model: string;
  readonly mode?: ReplyMode;
  /** For rejections: the machine-readable reason (as in `x-sluice-reason`). */
  readonly reason?: string;
  /** For admissions near a limit: the warning sent in `x-sluice-warning`. */
  readonly warning?: string;
  /** For degrade-tier admissions past their soft quota: the slow-down sent in `x-sluice-degraded`. */
  readonly degraded?: string;
  /** The request id, also the envelope id for admissions. */
  readonly id: string;
  /** For admissions: the LiteTopic the request waits in. */
  readonly liteTopic?: string;
  /** The windows checked and what they had left (request traces show them). */
  readonly windows?: readonly {
    readonly scope: string;
    readonly unit: string;
    readonly limit: number;
    readonly remaining: number;
  }[];
}

export interface EdgeOptions {
  /** Largest request body accepted, in bytes (default 1 MiB). */
  readonly bodyLimitBytes?: number;
  /** Longest a sync or stream client waits for its upstream call, on top of queue wait. */
  readonly upstreamTimeoutMs?: number;
  /**
   * A sync or stream answer not started within this long starts anyway and sends a byte a
   * client ignores at this interval (functions/edge/keepalive.ts), so a proxy's idle timeout
   * (CloudFront's origin read timeout) does not cut a request that is still waiting. Default 15 s.
   */
  readonly keepaliveMs?: number;
  /** Longest a sync or stream client is held (the host's own limit, e.g. the Lambda timeout); then the status URL. */
  readonly maxSyncWaitMs?: number;
  /** Deepest nesting accepted in a request body (default 64); deeper bodies get 400 before any charge. */
  readonly maxBodyDepth?: number;
  /**
   * Base URL clients reach the edge at (e.g. https://llm.example.com), for `status_url`
   * and `Location`. Unset: those are relative paths (`/v1/requests/<id>`). Never taken
   * from the request's Host header.
   */
  readonly publicBaseUrl?: string;
}
