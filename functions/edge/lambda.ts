/**
 * The edge in AWS Lambda, behind a function URL with response streaming (SSE).
 * Parts are built once per execution environment, at cold start; metrics leave as
 * CloudWatch EMF on stdout.
 */
import { streamHandle } from 'hono/aws-lambda';
import { spillRecorder } from '../dashboard/runtime.js';
import { readConfig } from '../runtime/config.js';
import { SECRET_FIELDS } from '../runtime/contract.js';
import { secretField } from '../runtime/secret-field.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { startAggregate } from '../runtime/aggregate.js';
import { adminKeyHash } from './admin-key.js';
import { createEdgeFromParts, edgeOptions } from './from-parts.js';
import { requireOriginSecret } from './origin-verify.js';
import { createEdgeTelemetry } from './telemetry.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-edge');
let onSpill: ((liteTopic: string, body: string) => void) | undefined;
const parts = await createParts(config, systemClock, log, {
  role: 'edge',
  onSpill: (liteTopic, body) => onSpill?.(liteTopic, body),
});
log.info(parts.describe, 'parts');
const emf = createEdgeTelemetry({ clock: systemClock, log, policy: parts.policy, stage: config.SLUICE_STAGE });
const recordSpill = spillRecorder(emf.telemetry);
// The deployment-wide view: this instance's admissions go to the shared aggregate (flushed while it runs).
const aggregate = startAggregate({
  store: parts.store,
  clock: systemClock,
  log,
  role: 'edge',
  policyHolder: parts.policyHolder,
  telemetry: () => emf.telemetry,
});
const keyHash = await adminKeyHash(config);
onSpill = (liteTopic, body) => {
  recordSpill(liteTopic, body);
  emf.flush();
};

const edgeApp = createEdgeFromParts({
  parts,
  clock: systemClock,
  log,
  options: edgeOptions(config),
  adminKeyHash: keyHash,
  // One EMF line per admission: a Lambda invocation handles one request, and a
  // streaming handler gives no later point that is sure to run before the freeze.
  onAdmission: (event) => {
    emf.telemetry.onAdmission(event);
    emf.flush();
  },
  aggregate,
  // With an admin key: the dashboard of the whole deployment, from the aggregate.
  ...(keyHash ? { dashboard: { telemetry: emf.telemetry } } : {}),
});
export const app = config.SLUICE_ORIGIN_SECRET_ID
  ? requireOriginSecret(edgeApp, await secretField(config.SLUICE_ORIGIN_SECRET_ID, SECRET_FIELDS.origin.value))
  : edgeApp;
export const handler = streamHandle(app);
