import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { ALARMS, EMF_NAMESPACE } from '../../../lib/telemetry/alarms.js';
import { CONTRACT_METRICS, createEmfSink } from '../../../lib/telemetry/emf.js';
import { METRICS, SLUICE_NAMESPACE } from '../../../infra/metrics.js';
import { createPrometheusSink } from '../../../lib/telemetry/prometheus.js';
import { createTelemetry } from '../../../lib/telemetry/telemetry.js';
import { admitted, captureLogger, envelope, policyWith, refused } from './helpers.js';

function traffic(telemetry: ReturnType<typeof createTelemetry>, clock: VirtualClock, n = 3) {
  for (let i = 0; i < n; i++) {
    const e = envelope('t0', 'realtime', clock.now() - 200);
    telemetry.onAdmission(admitted(e));
    telemetry.onDispatch({ type: 'started', envelope: e, queueWaitMs: 150 });
    telemetry.onDispatch({ type: 'completed', envelope: e, status: 200, totalMs: 450 });
  }
  telemetry.onAdmission(refused('t1', 'account-model:requests', 'batch'));
  const running = envelope('t1', 'batch', clock.now());
  telemetry.onAdmission(admitted(running));
  telemetry.onDispatch({ type: 'started', envelope: running, queueWaitMs: 2 });
}

describe('Prometheus exposition', () => {
  it('exposes counters, latency histograms in seconds, and gauges read at scrape time', async () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const prometheus = createPrometheusSink();
    const policy = policyWith(2);
    const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy, sinks: [prometheus] });
    traffic(telemetry, clock);
    const text = await prometheus.scrape();
    expect(prometheus.contentType).toMatch(/^text\/plain/);
    expect(text).toContain('# TYPE sluice_admitted_total counter');
    expect(text).toContain('sluice_admitted_total{tier="realtime",tenant="t0",model="m"} 3');
    expect(text).toContain(
      'sluice_refused_total{tier="batch",tenant="t1",model="m",reason="account-model:requests"} 1',
    );
    expect(text).toContain('sluice_absorbed_total{tier="realtime",tenant="t0",model="m"} 3');
    expect(text).toContain('# TYPE sluice_queue_wait_seconds histogram');
    expect(text).toContain('sluice_queue_wait_seconds_bucket{le="0.25",tier="realtime",tenant="t0",model="m"} 3');
    expect(text).toContain('sluice_end_to_end_seconds_sum{tier="realtime",tenant="t0",model="m"} 1.35');
    expect(text).toContain('sluice_gpu_slots_in_use{model="m",tier="batch"} 1');
    expect(text).toContain('sluice_gpu_slots_reserved{model="m",tier="realtime"} 6');
    expect(text).toContain('sluice_gpu_slots_capacity{model="m"} 10');
    expect(text).toContain('sluice_reservoir_depth{tier="batch",tenant="t1",model="m"} 1');
    expect(text).toContain('sluice_pace_factor{model="m"} 1');
    // Gauges follow the state: the batch request finishes, its slot and place are freed.
    telemetry.onDispatch({ type: 'completed', envelope: envelope('t1', 'batch'), status: 200, totalMs: 3 });
    const next = await prometheus.scrape();
    expect(next).toContain('sluice_reservoir_depth{tier="batch",tenant="t1",model="m"} 0');
  });

  it('keeps two Sluices in one process apart (one registry each)', async () => {
    const a = createPrometheusSink();
    const b = createPrometheusSink();
    a.count('admitted', { tier: 'x', tenant: 'y', model: 'z' }, 1);
    expect(await b.scrape()).not.toContain('tier="x"');
  });
});

describe('CloudWatch EMF adapter', () => {
  afterEach(() => vi.restoreAllMocks());

  function captureStdout(): string[] {
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(line);
      return true;
    });
    return lines;
  }

  it('writes one EMF document per dimension set, with counts summed and latencies as values', () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const metrics = new Metrics({ namespace: 'Sluice', serviceName: 'edge' });
    const emf = createEmfSink({ clock, metrics });
    const policy = policyWith(2);
    const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy, sinks: [emf] });
    traffic(telemetry, clock);
    const out = captureStdout();
    const written = emf.flush();
    vi.restoreAllMocks();
    const docs = out.map(
      (l) =>
        JSON.parse(l) as Record<string, unknown> & {
          _aws: {
            Timestamp: number;
            CloudWatchMetrics: Array<{
              Namespace: string;
              Dimensions: string[][];
              Metrics: Array<{ Name: string; Unit: string }>;
            }>;
          };
        },
    );
    expect(docs).toHaveLength(written);
    for (const d of docs) {
      expect(d._aws.Timestamp).toBe(clock.now());
      expect(d._aws.CloudWatchMetrics[0]!.Namespace).toBe('Sluice');
      expect(d.service).toBe('edge');
    }
    const t0 = docs.find((d) => d.tenant === 't0' && d.tier === 'realtime' && !('reason' in d))!;
    expect(t0._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'tier', 'tenant', 'model']]);
    expect(t0).toMatchObject({
      admitted: 3,
      dispatched: 3,
      completed: 3,
      absorbed: 3,
      queue_wait_ms: [150, 150, 150],
      end_to_end_ms: [450, 450, 450],
    });
    const units = Object.fromEntries(t0._aws.CloudWatchMetrics[0]!.Metrics.map((m) => [m.Name, m.Unit]));
    expect(units).toMatchObject({ admitted: 'Count', queue_wait_ms: 'Milliseconds' });
    const refusedDoc = docs.find((d) => d.reason === 'account-model:requests')!;
    expect(refusedDoc).toMatchObject({ tier: 'batch', tenant: 't1', refused: 1 });
    const gpu = docs.find((d) => d.tier === 'batch' && 'gpu_slots_in_use' in d)!;
    expect(gpu).toMatchObject({ model: 'm', gpu_slots_in_use: 1, gpu_slots_reserved: 2 });
    // Counters rolled up by tier, for alarms.
    const batchRollup = docs.find(
      (d) => d._aws.CloudWatchMetrics[0]!.Dimensions[0]!.join() === 'service,tier' && d.tier === 'batch',
    )!;
    expect(batchRollup).toMatchObject({ admitted: 1, refused: 1, dispatched: 1 });
    // A flush empties the buffer: the next one only carries gauges.
    const again = captureStdout();
    emf.flush();
    vi.restoreAllMocks();
    expect(again.map((l) => JSON.parse(l)).some((d) => 'admitted' in d)).toBe(false);
  });

  it('splits more than 99 latencies of one metric over several documents, dimensions intact', () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const emf = createEmfSink({
      clock,
      metrics: new Metrics({ namespace: 'Sluice', serviceName: 'dispatcher' }),
      gauges: false,
      rollups: false,
    });
    const labels = { tier: 'realtime', tenant: 't0', model: 'm' };
    for (let i = 0; i < 250; i++) emf.observe('queue_wait', labels, i);
    emf.count('completed', labels, 250);
    const out = captureStdout();
    expect(emf.flush()).toBe(3);
    vi.restoreAllMocks();
    const docs = out.map((l) => JSON.parse(l));
    expect(docs).toHaveLength(3);
    expect(docs.map((d) => d.queue_wait_ms.length)).toEqual([99, 99, 52]);
    expect(docs.every((d) => d.tenant === 't0' && d.tier === 'realtime')).toBe(true);
    expect(docs.filter((d) => d.completed === 250)).toHaveLength(1);
  });
});

describe('alarms', () => {
  afterEach(() => vi.restoreAllMocks());

  it('one alarm per alert, on the alerts metric rolled up by alert, which the EMF adapter writes', () => {
    expect(ALARMS.map((a) => a.alert)).toEqual([
      'realtime-near-limit',
      'dead-letters',
      'spillover-in-use',
      'queue-wait-above-max',
    ]);
    const clock = new VirtualClock(1_700_000_000_000);
    const emf = createEmfSink({
      clock,
      metrics: new Metrics({ namespace: EMF_NAMESPACE, serviceName: 'dispatcher' }),
      gauges: false,
    });
    const policy = policyWith(1);
    const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy, sinks: [emf] });
    telemetry.onDispatch({ type: 'failed', envelope: envelope('t0'), status: 502, reason: 'upstream answered 503' });
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(line);
      return true;
    });
    emf.flush();
    vi.restoreAllMocks();
    const spec = ALARMS.find((a) => a.alert === 'dead-letters')!;
    const doc = lines
      .map((l) => JSON.parse(l))
      .find(
        (d) =>
          d._aws.CloudWatchMetrics[0].Dimensions[0].join() === 'service,alert' && d.alert === spec.dimensions.alert,
      );
    expect(doc).toMatchObject({ [spec.metricName]: 1, service: 'dispatcher' });
    expect(doc._aws.CloudWatchMetrics[0].Namespace).toBe(EMF_NAMESPACE);
  });
});

describe('EMF: the metrics the CDK stacks alarm and scale on', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes AdmissionWarning/AdmissionRejected by {Stage, Tier} and SpilloverSent/DispatcherBacklog/Inflight by {Stage}, without service', () => {
    expect(CONTRACT_METRICS).toEqual(METRICS);
    const clock = new VirtualClock(1_700_000_000_000);
    const emf = createEmfSink({
      clock,
      metrics: new Metrics({ namespace: SLUICE_NAMESPACE, serviceName: 'edge' }),
      contract: { stage: 'prod', metrics: new Metrics({ namespace: SLUICE_NAMESPACE }) },
    });
    const policy = policyWith(2);
    const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy, sinks: [emf] });
    traffic(telemetry, clock);
    telemetry.onAdmission(admitted(envelope('t0'), 'tenant requests at 90% of 6000 per minute'));
    telemetry.recordSpill(envelope('t1'));
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(line);
      return true;
    });
    emf.flush();
    vi.restoreAllMocks();
    const docs = lines.map((l) => JSON.parse(l));
    const dims = (d: { _aws: { CloudWatchMetrics: Array<{ Dimensions: string[][] }> } }) =>
      d._aws.CloudWatchMetrics[0]!.Dimensions[0]!.join();
    const realtime = docs.find((d) => dims(d) === 'Stage,Tier' && d.Tier === 'realtime');
    const batch = docs.find((d) => dims(d) === 'Stage,Tier' && d.Tier === 'batch');
    expect(realtime).toMatchObject({ Stage: 'prod', AdmissionWarning: 1, AdmissionRejected: 0 });
    expect(batch).toMatchObject({ Stage: 'prod', AdmissionWarning: 0, AdmissionRejected: 1 });
    expect(realtime).not.toHaveProperty('service');
    const stage = docs.find((d) => dims(d) === 'Stage');
    expect(stage).toMatchObject({ Stage: 'prod', SpilloverSent: 1, Inflight: 1 });
    expect(stage.DispatcherBacklog).toBeGreaterThanOrEqual(1);
    expect(stage._aws.CloudWatchMetrics[0].Namespace).toBe('Sluice');
  });
});
