/**
 * The edge's telemetry: CloudWatch EMF on stdout, with the {Stage}-dimensioned metrics the
 * stacks alarm on (AdmissionWarning, AdmissionRejected, SpilloverSent). No gauges: an
 * invocation sees one request, not the backlog (the dispatchers report that).
 */
import type { Clock } from '../../lib/clock/clock.js';
import type { Policy } from '../../lib/policy/schema.js';
import type { Logger } from '../../lib/telemetry/log.js';
import { createEmfTelemetry, type EmfTelemetry } from '../dashboard/runtime.js';
import { SLUICE_NAMESPACE } from '../runtime/contract.js';

export function createEdgeTelemetry(options: {
  clock: Clock;
  log: Logger;
  policy: () => Policy;
  stage: string;
}): EmfTelemetry {
  return createEmfTelemetry({ ...options, namespace: SLUICE_NAMESPACE, gauges: false, serviceName: 'sluice-edge' });
}
