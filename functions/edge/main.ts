/**
 * The edge as a Node server (containers, several instances on one store): the
 * OpenAI routes, and with an admin key the admin API, request traces and the
 * dashboard of the whole deployment, read from the shared aggregate. Prints
 * `listening <url>` once it serves.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createPolicyAdmin } from '../../lib/policy/admin.js';
import { createDashboardApp } from '../dashboard/app.js';
import { createPrometheusTelemetry } from '../dashboard/runtime.js';
import { startAggregate } from '../runtime/aggregate.js';
import { readConfig, type Config } from '../runtime/config.js';
import { newRequestId } from '../runtime/ids.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { adminKeyHash } from './admin-key.js';
import { createEdgeApp } from './app.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-edge');
const parts = await createParts(config, systemClock, log, { role: 'edge' });
let telemetry: ReturnType<typeof createPrometheusTelemetry> | undefined;
const aggregate = startAggregate({
  store: parts.store,
  clock: systemClock,
  log,
  role: 'edge',
  policyHolder: parts.policyHolder,
  telemetry: () => telemetry?.telemetry,
});
telemetry = createPrometheusTelemetry({ clock: systemClock, log, policy: parts.policy, tenantLabel: aggregate.labels.label });
const keyHash = await adminKeyHash(config);
const app = createEdgeApp({
  clock: systemClock,
  store: parts.store,
  queue: parts.queue,
  results: parts.results,
  policy: parts.policy,
  newId: newRequestId,
  log,
  onAdmission: (event) => {
    telemetry?.telemetry.onAdmission(event);
    aggregate.sink.onAdmission(event);
  },
  options: { bodyLimitBytes: config.SLUICE_BODY_LIMIT_BYTES, keepaliveMs: config.SLUICE_KEEPALIVE_MS, maxSyncWaitMs: config.SLUICE_MAX_SYNC_WAIT_MS },
  admin: keyHash ? { keyHash, policy: createPolicyAdmin(parts.policySource, parts.policyHolder), clock: systemClock, newId: newRequestId } : undefined,
});
if (keyHash) {
  const { prometheus } = telemetry;
  app.route('/', createDashboardApp({ telemetry: telemetry.telemetry, prometheus, adminKeyHash: keyHash, view: (rows) => aggregate.view.live(rows) }));
}
const server = serve({ fetch: app.fetch, hostname: config.SLUICE_EDGE_HOST, port: config.SLUICE_EDGE_PORT }, (info: AddressInfo) => {
  log.info({ ...parts.describe, admin: keyHash !== undefined }, 'edge serving');
  process.stdout.write(`listening http://${config.SLUICE_EDGE_HOST}:${info.port}\n`);
});

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    server.close();
    await aggregate.close();
    await parts.close();
    process.exit(0);
  });
}
