/**
 * A dispatcher's telemetry: Prometheus on `GET /metrics` for whoever scrapes it, and
 * CloudWatch EMF on stdout (the awslogs driver carries it to CloudWatch Logs, which
 * extracts the metrics) for what the stacks scale and alarm on: DispatcherBacklog and
 * Inflight by {Stage}. Nothing in AWS scrapes `/metrics`, so the EMF flush is what the
 * backlog scaling policy and the "backlog growing" alarm see.
 */
import { Metrics } from '@aws-lambda-powertools/metrics';
import type { Clock } from '../../lib/clock/clock.js';
import type { Policy } from '../../lib/policy/schema.js';
import { createEmfSink } from '../../lib/telemetry/emf.js';
import type { Logger } from '../../lib/telemetry/log.js';
import { createPrometheusSink, type PrometheusSink } from '../../lib/telemetry/prometheus.js';
import { createTelemetry, type Telemetry } from '../../lib/telemetry/telemetry.js';
import { SLUICE_NAMESPACE } from '../runtime/contract.js';

export interface DispatcherTelemetry {
  readonly telemetry: Telemetry;
  readonly prometheus: PrometheusSink;
  /** Writes the EMF lines of the interval (also on a timer once `start`ed); returns how many. */
  flush(): number;
  /** Flushes every `intervalMs` until `stop`. */
  start(intervalMs: number): void;
  stop(): void;
}

export function createDispatcherTelemetry(options: {
  clock: Clock;
  log: Logger;
  policy: () => Policy;
  stage: string;
  /** The deployment's shared choice of tenant label (lib/telemetry/aggregate/labels.ts). */
  tenantLabel?: (tenant: string) => string;
}): DispatcherTelemetry {
  const prometheus = createPrometheusSink();
  const emf = createEmfSink({
    clock: options.clock,
    metrics: new Metrics({ namespace: SLUICE_NAMESPACE, serviceName: 'sluice-dispatcher' }),
    gauges: true,
    contract: { stage: options.stage, metrics: new Metrics({ namespace: SLUICE_NAMESPACE }) },
  });
  const telemetry = createTelemetry({
    clock: options.clock,
    log: options.log,
    policy: options.policy,
    sinks: [prometheus, emf],
    ...(options.tenantLabel ? { tenantLabel: options.tenantLabel } : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  return {
    telemetry,
    prometheus,
    flush: () => emf.flush(),
    start(intervalMs) {
      timer ??= setInterval(() => emf.flush(), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      emf.flush();
    },
  };
}
