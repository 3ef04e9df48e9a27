/**
 * The edge as a Node server (containers, several instances on one store): the
 * OpenAI routes, and with an admin key the admin API, request traces and the
 * dashboard of the whole deployment, read from the shared aggregate. Prints
 * `listening <url>` once it serves.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createPrometheusTelemetry } from '../dashboard/runtime.js';
import { startAggregate } from '../runtime/aggregate.js';
import { readConfig } from '../runtime/config.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { adminKeyHash } from './admin-key.js';
import { createEdgeFromParts, edgeOptions } from './from-parts.js';

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
telemetry = createPrometheusTelemetry({
  clock: systemClock,
  log,
  policy: parts.policy,
  tenantLabel: aggregate.labels.label,
});
const keyHash = await adminKeyHash(config);
const stopTaking = new AbortController();
const stopWaiting = new AbortController();
const app = createEdgeFromParts({
  parts,
  clock: systemClock,
  log,
  options: edgeOptions(config),
  adminKeyHash: keyHash,
  onAdmission: (event) => telemetry?.telemetry.onAdmission(event),
  aggregate,
  ...(keyHash ? { dashboard: { telemetry: telemetry.telemetry, prometheus: telemetry.prometheus } } : {}),
  stopTaking: stopTaking.signal,
  stopWaiting: stopWaiting.signal,
});
const server = serve(
  { fetch: app.fetch, hostname: config.SLUICE_EDGE_HOST, port: config.SLUICE_EDGE_PORT },
  (info: AddressInfo) => {
    log.info({ ...parts.describe, admin: keyHash !== undefined }, 'edge serving');
    process.stdout.write(`listening http://${config.SLUICE_EDGE_HOST}:${info.port}\n`);
  },
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    // New requests get 503 shutting_down before any charge; clients still waiting are answered, not cut.
    stopTaking.abort();
    stopWaiting.abort();
    server.close();
    await aggregate.close();
    await parts.close();
    process.exit(0);
  });
}
