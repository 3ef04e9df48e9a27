import { encodeEnvelope } from '../../../lib/envelope.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  spillRecorder,
  createEmfTelemetry,
  createPrometheusTelemetry,
  startMetricsServer,
} from '../../../functions/dashboard/runtime.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { admitted, captureLogger, envelope, policyWith } from '../../lib/telemetry/helpers.js';

describe('telemetry for deployed processes', () => {
  afterEach(() => vi.restoreAllMocks());

  it('a dispatcher serves Prometheus on its own port', async () => {
    const policy = policyWith(1);
    const { telemetry, prometheus } = createPrometheusTelemetry({
      clock: new VirtualClock(0),
      log: captureLogger(),
      policy: () => policy,
    });
    const server = await startMetricsServer({ prometheus, port: 0 });
    try {
      const e = envelope('t0');
      telemetry.onDispatch({ type: 'started', envelope: e, queueWaitMs: 70 });
      telemetry.onDispatch({ type: 'completed', envelope: e, status: 200, totalMs: 90 });
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('sluice_absorbed_total{tier="realtime",tenant="t0",model="m"} 1');
      expect(text).toContain('sluice_queue_wait_seconds_count{tier="realtime",tenant="t0",model="m"} 1');
    } finally {
      await server.close();
    }
  });

  it('the Lambda edge writes EMF to stdout on flush', () => {
    const policy = policyWith(1);
    const clock = new VirtualClock(1_700_000_000_000);
    const { telemetry, flush } = createEmfTelemetry({
      clock,
      log: captureLogger(),
      policy: () => policy,
      serviceName: 'sluice-edge',
      gauges: false,
      stage: 'dev',
    });
    telemetry.onAdmission(admitted(envelope('t0')));
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    // The CDK contract metrics ({Stage, Tier} and {Stage}), the full dimension set, and the rollup by tier.
    expect(flush()).toBe(4);
    vi.restoreAllMocks();
    const docs = lines
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(docs[0]).toMatchObject({ Stage: 'dev', Tier: 'realtime', AdmissionWarning: 0, AdmissionRejected: 0 });
    expect(docs[1]).toMatchObject({ Stage: 'dev', SpilloverSent: 0 });
    expect(docs[3]).toMatchObject({ service: 'sluice-edge', tier: 'realtime', admitted: 1 });
    const doc = docs[2];
    expect(doc).toMatchObject({ service: 'sluice-edge', tier: 'realtime', tenant: 't0', model: 'm', admitted: 1 });
    expect(doc._aws.CloudWatchMetrics[0].Namespace).toBe('Sluice');
  });

  it('counts spills and raises the spillover alert', async () => {
    const policy = policyWith(1);
    const log = captureLogger();
    const { telemetry, prometheus } = createPrometheusTelemetry({
      clock: new VirtualClock(0),
      log,
      policy: () => policy,
    });
    const onSpill = spillRecorder(telemetry);
    const e = envelope('t0');
    onSpill(e.liteTopic, encodeEnvelope(e));
    onSpill(e.liteTopic, 'not an envelope');
    expect(await prometheus.scrape()).toContain('sluice_spilled_total{tier="realtime",tenant="t0",model="m"} 1');
    expect(log.lines.find((l) => l.obj.event === 'alert')?.obj.alert).toBe('spillover-in-use');
  });
});
