/**
 * Telemetry for the deployed processes, ready to wire:
 *
 * - a dispatcher container serves Prometheus at `GET /metrics` on its own port
 *   (`startMetricsServer`), fed by `createDispatcher({ onEvent: telemetry.onDispatch })`;
 * - the Lambda edge writes CloudWatch EMF to stdout (`createEmfTelemetry`), fed by
 *   `createEdgeApp({ onAdmission: telemetry.onAdmission })` and flushed after each
 *   invocation.
 *
 * Both use the same telemetry core as `npm start`, so names and labels match.
 */
import type { AddressInfo } from 'node:net';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createEmfSink } from '../../lib/telemetry/emf.js';
import { createPrometheusSink, type PrometheusSink } from '../../lib/telemetry/prometheus.js';
import { decodeEnvelope, type Envelope } from '../../lib/envelope.js';
import { createTelemetry, type Telemetry, type TelemetryOptions } from '../../lib/telemetry/telemetry.js';

type CoreOptions = Omit<TelemetryOptions, 'sinks'>;

/** Telemetry exporting to Prometheus. */
export function createPrometheusTelemetry(options: CoreOptions): { telemetry: Telemetry; prometheus: PrometheusSink } {
  const prometheus = createPrometheusSink();
  return { telemetry: createTelemetry({ ...options, sinks: [prometheus] }), prometheus };
}

export interface MetricsServer {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * `GET /metrics` (and `/healthz`) on a port of its own. Binds loopback unless told
 * otherwise; a container passes `host: '0.0.0.0'` so its scraper can reach it.
 */
export function startMetricsServer(options: {
  prometheus: PrometheusSink;
  host?: string;
  port?: number;
}): Promise<MetricsServer> {
  const app = new Hono();
  app.get('/metrics', async (c) =>
    c.body(await options.prometheus.scrape(), 200, { 'content-type': options.prometheus.contentType }),
  );
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 9464 }, (info: AddressInfo) =>
      resolve({
        url: `http://${host}:${info.port}`,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    );
  });
}

export interface EmfTelemetry {
  readonly telemetry: Telemetry;
  /** Writes the EMF lines of what happened since the last flush; call at the end of each invocation. */
  flush(): number;
}

/** Telemetry exporting CloudWatch EMF through powertools (namespace and service from options or POWERTOOLS_* variables). */
export function createEmfTelemetry(
  options: CoreOptions & {
    namespace?: string;
    serviceName?: string;
    gauges?: boolean;
    /** SLUICE_STAGE: also write the {Stage}-dimensioned metrics the CDK alarms and scaling read (infra/metrics.ts). */
    stage?: string;
  },
): EmfTelemetry {
  const namespace = options.namespace ?? 'Sluice';
  const metrics = new Metrics({ namespace, serviceName: options.serviceName });
  const contract = options.stage ? { stage: options.stage, metrics: new Metrics({ namespace }) } : undefined;
  const emf = createEmfSink({ clock: options.clock, metrics, gauges: options.gauges, contract });
  return { telemetry: createTelemetry({ ...options, sinks: [emf] }), flush: () => emf.flush() };
}

/**
 * An `onSpill` observer (Spillover, createParts) that counts each envelope sent to the
 * SQS spillover and raises the `spillover-in-use` alert.
 */
export function spillRecorder(telemetry: Pick<Telemetry, 'recordSpill'>): (liteTopic: string, body: string) => void {
  return (liteTopic, body) => {
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(body);
    } catch {
      return;
    }
    telemetry.recordSpill({ ...envelope, liteTopic });
  };
}
