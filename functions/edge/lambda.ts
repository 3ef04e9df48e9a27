/**
 * The edge in AWS Lambda, behind a function URL with response streaming (SSE).
 * Parts are built once per execution environment, at cold start; metrics leave as
 * CloudWatch EMF on stdout.
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { streamHandle } from 'hono/aws-lambda';
import { spillRecorder } from '../dashboard/runtime.js';
import { createPolicyAdmin } from '../../lib/policy/admin.js';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { readConfig } from '../runtime/config.js';
import { SECRET_FIELDS } from '../runtime/contract.js';
import { newRequestId } from '../runtime/ids.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { createEdgeApp } from './app.js';
import { requireOriginSecret } from './origin-verify.js';
import { createEdgeTelemetry } from './telemetry.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-edge');
let onSpill: ((liteTopic: string, body: string) => void) | undefined;
const parts = await createParts(config, systemClock, log, { role: 'edge', onSpill: (liteTopic, body) => onSpill?.(liteTopic, body) });
log.info(parts.describe, 'parts');
const emf = createEdgeTelemetry({ clock: systemClock, log, policy: parts.policy, stage: config.SLUICE_STAGE });
const recordSpill = spillRecorder(emf.telemetry);
onSpill = (liteTopic, body) => {
  recordSpill(liteTopic, body);
  emf.flush();
};

const edgeApp = createEdgeApp({
  clock: systemClock,
  store: parts.store,
  queue: parts.queue,
  results: parts.results,
  policy: parts.policy,
  newId: newRequestId,
  log,
  // One EMF line per admission: a Lambda invocation handles one request, and a
  // streaming handler gives no later point that is sure to run before the freeze.
  onAdmission: (event) => {
    emf.telemetry.onAdmission(event);
    emf.flush();
  },
  ...(config.SLUICE_ADMIN_SECRET_ID
    ? {
        admin: {
          keyHash: hashApiKey(await secretField(config.SLUICE_ADMIN_SECRET_ID, SECRET_FIELDS.admin.key)),
          // Writes go to the policy source (SSM); every instance picks them up on its next refresh.
          policy: createPolicyAdmin(parts.policySource, parts.policyHolder),
          clock: systemClock,
          newId: newRequestId,
        },
      }
    : {}),
  options: { bodyLimitBytes: config.SLUICE_BODY_LIMIT_BYTES },
});
export const app = config.SLUICE_ORIGIN_SECRET_ID
  ? requireOriginSecret(edgeApp, await secretField(config.SLUICE_ORIGIN_SECRET_ID, SECRET_FIELDS.origin.value))
  : edgeApp;
export const handler = streamHandle(app);

async function secretField(id: string, field: string): Promise<string> {
  const secret = (await getSecret(id, { transform: 'json' })) as Record<string, unknown> | undefined;
  const value = secret?.[field];
  if (typeof value !== 'string' || value.length < 16) throw new Error(`secret ${id} must hold JSON {"${field}": <at least 16 characters>}`);
  return value;
}
