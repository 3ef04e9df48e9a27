/**
 * The edge app from a process's parts: the one wiring every edge process uses
 * (Lambda, the Node server, `npm start`, the chaos bench's edge). Each used to
 * wire createEdgeApp itself and they drifted: the Node server never passed the
 * body depth limit, the public base URL or the upstream timeout it read from its
 * environment. Settings now reach the app through `edgeOptions(config)` alone.
 */
import type { Hono } from 'hono';
import type { Clock } from '../../lib/clock/clock.js';
import { createPolicyAdmin } from '../../lib/policy/admin.js';
import type { Logger } from '../../lib/telemetry/log.js';
import { createDashboardApp, type DashboardOptions } from '../dashboard/app.js';
import type { AggregateWiring } from '../runtime/aggregate.js';
import type { Config } from '../runtime/config.js';
import { newRequestId } from '../runtime/ids.js';
import type { Parts } from '../runtime/parts.js';
import { createEdgeApp } from './app.js';
import type { AdmissionEvent, EdgeOptions } from './deps.js';

/** What the environment says about the edge's behaviour (limits, waits, public URL). */
export function edgeOptions(config: Config): EdgeOptions {
  return {
    bodyLimitBytes: config.SLUICE_BODY_LIMIT_BYTES,
    maxBodyDepth: config.SLUICE_MAX_BODY_DEPTH,
    publicBaseUrl: config.SLUICE_PUBLIC_BASE_URL,
    upstreamTimeoutMs: config.SLUICE_UPSTREAM_TIMEOUT_MS,
    keepaliveMs: config.SLUICE_KEEPALIVE_MS,
    maxSyncWaitMs: config.SLUICE_MAX_SYNC_WAIT_MS,
  };
}

export interface EdgeWiring {
  readonly parts: Pick<Parts, 'store' | 'queue' | 'results' | 'policy' | 'policySource' | 'policyHolder'>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly options?: EdgeOptions;
  /** SHA-256 (hex) of the admin key: serves the admin API, which writes to the policy source. Unset: /admin answers 404. */
  readonly adminKeyHash?: string;
  /** This process's own listener (its telemetry); the aggregate, when given, is told as well. */
  readonly onAdmission?: (event: AdmissionEvent) => void;
  /** The deployment-wide view: admissions go to it and the dashboard reads from it. */
  readonly aggregate?: AggregateWiring;
  /** Serves the dashboard, behind the admin key when there is one. */
  readonly dashboard?: Omit<DashboardOptions, 'adminKeyHash' | 'view'>;
  readonly stopTaking?: AbortSignal;
  readonly stopWaiting?: AbortSignal;
}

export function createEdgeFromParts(wiring: EdgeWiring): Hono {
  const { parts, clock, log, aggregate, onAdmission, adminKeyHash } = wiring;
  const app = createEdgeApp({
    clock,
    store: parts.store,
    queue: parts.queue,
    results: parts.results,
    policy: parts.policy,
    newId: newRequestId,
    log,
    onAdmission: (event) => {
      onAdmission?.(event);
      aggregate?.sink.onAdmission(event);
    },
    ...(wiring.options ? { options: wiring.options } : {}),
    // Writes go to the policy source (SSM, a file); every instance picks them up on its next refresh.
    ...(adminKeyHash
      ? {
          admin: {
            keyHash: adminKeyHash,
            policy: createPolicyAdmin(parts.policySource, parts.policyHolder),
            clock,
            newId: newRequestId,
          },
        }
      : {}),
    ...(wiring.stopTaking ? { stopTaking: wiring.stopTaking } : {}),
    ...(wiring.stopWaiting ? { stopWaiting: wiring.stopWaiting } : {}),
  });
  if (wiring.dashboard) {
    app.route(
      '/',
      createDashboardApp({
        ...wiring.dashboard,
        adminKeyHash,
        ...(aggregate ? { view: (rows: number) => aggregate.view.live(rows) } : {}),
      }),
    );
  }
  return app;
}
