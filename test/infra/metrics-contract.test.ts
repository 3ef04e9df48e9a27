/**
 * Every custom metric an alarm or a scaling policy of the synthesized stacks reads is
 * emitted, with the same namespace, name and dimensions (names and values), by the process
 * it watches: the edge's EMF for admission and spill metrics, the dispatcher's for backlog
 * and in-flight. Each process's telemetry is built by the same function its entry point uses.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDispatcherTelemetry } from '../../functions/dispatcher/telemetry.ts';
import { createEdgeTelemetry } from '../../functions/edge/telemetry.ts';
import { METRICS, SLUICE_NAMESPACE } from '../../functions/runtime/contract.ts';
import { VirtualClock } from '../../lib/clock/virtual-clock.ts';
import { admitted, captureLogger, envelope, policyWith, refused } from '../lib/telemetry/helpers.ts';
import { synthesize, type Synthesized } from './helpers.ts';

type Json = Record<string, unknown>;
interface Watched {
  readonly alarm: string;
  readonly namespace: string;
  readonly name: string;
  readonly dims: Record<string, string>;
}
interface Emitted {
  readonly namespace: string;
  readonly name: string;
  readonly dims: Record<string, string>;
}

const STAGE = 'metrics';
/** Which process emits which metric (the one the alarm or scaling watches). */
const EMITTER: Record<string, 'edge' | 'dispatcher'> = {
  [METRICS.admissionWarning]: 'edge',
  [METRICS.admissionRejected]: 'edge',
  [METRICS.spilloverSent]: 'edge',
  [METRICS.dispatcherBacklog]: 'dispatcher',
  [METRICS.inflight]: 'dispatcher',
};

/** Every alarm metric in our namespace, from CloudWatch alarms (step scaling alarms included). */
function watched(v: Synthesized): Watched[] {
  const out: Watched[] = [];
  for (const stack of v.assembly.stacks) {
    const resources = (stack.template as { Resources: Record<string, { Type: string; Properties: Json }> }).Resources;
    for (const [id, r] of Object.entries(resources)) {
      if (r.Type !== 'AWS::CloudWatch::Alarm') continue;
      const p = r.Properties;
      const dimsOf = (d: unknown) => Object.fromEntries(((d ?? []) as { Name: string; Value: string }[]).map((x) => [x.Name, x.Value]));
      if (typeof p.MetricName === 'string') {
        out.push({ alarm: `${stack.stackName}/${id}`, namespace: String(p.Namespace), name: p.MetricName, dims: dimsOf(p.Dimensions) });
      }
      for (const m of (p.Metrics ?? []) as { MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions?: unknown } } }[]) {
        if (!m.MetricStat) continue;
        const metric = m.MetricStat.Metric;
        out.push({ alarm: `${stack.stackName}/${id}`, namespace: metric.Namespace, name: metric.MetricName, dims: dimsOf(metric.Dimensions) });
      }
    }
  }
  return out.filter((w) => w.namespace === SLUICE_NAMESPACE);
}

/** Runs `work` and returns the EMF metrics it wrote to stdout. */
function captureEmf(work: () => void): Emitted[] {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    work();
  } finally {
    spy.mockRestore();
  }
  const out: Emitted[] = [];
  for (const line of lines.join('').split('\n').filter((l) => l.startsWith('{'))) {
    const doc = JSON.parse(line) as Json & { _aws?: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[] } };
    for (const d of doc._aws?.CloudWatchMetrics ?? []) {
      for (const set of d.Dimensions) {
        const dims = Object.fromEntries(set.map((k) => [k, String(doc[k])]));
        for (const m of d.Metrics) out.push({ namespace: d.Namespace, name: m.Name, dims });
      }
    }
  }
  return out;
}

let v: Synthesized;
const emitted: Record<'edge' | 'dispatcher', Emitted[]> = { edge: [], dispatcher: [] };
beforeAll(() => {
  v = synthesize({ stage: STAGE }, { bundle: false });
  const policy = policyWith(1);
  // CloudWatch takes EMF timestamps within 14 days of now (powertools warns otherwise).
  const clock = new VirtualClock(Date.now());
  const edge = createEdgeTelemetry({ clock, log: captureLogger(), policy: () => policy, stage: STAGE });
  emitted.edge = captureEmf(() => {
    for (const tier of ['realtime', 'batch', 'offline']) {
      edge.telemetry.onAdmission(admitted(envelope('t0', tier), 'near limit'));
      edge.telemetry.onAdmission(refused('t0', 'rpm', tier));
    }
    edge.flush();
  });
  const dispatcher = createDispatcherTelemetry({ clock, log: captureLogger(), policy: () => policy, stage: STAGE });
  emitted.dispatcher = captureEmf(() => {
    dispatcher.telemetry.onDispatch({ type: 'started', envelope: envelope('t0'), queueWaitMs: 10 });
    dispatcher.flush();
  });
}, 120_000);
afterAll(() => v.cleanup());

describe('metrics the stacks alarm and scale on', () => {
  it('are found in the templates (the scaling policy and the alarms)', () => {
    const names = new Set(watched(v).map((w) => w.name));
    expect(names).toEqual(new Set([METRICS.admissionWarning, METRICS.dispatcherBacklog]));
    expect(watched(v).some((w) => w.alarm.includes('Dispatchers'))).toBe(true);
  });

  it('are each emitted by the process they watch, with the same namespace, name and dimensions', () => {
    for (const w of watched(v)) {
      const process = EMITTER[w.name];
      expect(process, `${w.alarm} reads ${w.name}, which no process is known to emit`).toBeDefined();
      const match = emitted[process!].find(
        (e) => e.namespace === w.namespace && e.name === w.name && JSON.stringify(sorted(e.dims)) === JSON.stringify(sorted(w.dims)),
      );
      expect(match, `${w.alarm}: ${w.namespace}/${w.name} ${JSON.stringify(w.dims)} not in the ${process} EMF`).toBeDefined();
    }
  });

  it('dashboard-only contract metrics are emitted too', () => {
    for (const [name, process] of Object.entries(EMITTER)) {
      expect(emitted[process].some((e) => e.name === name && e.dims.Stage === STAGE), name).toBe(true);
    }
  });
});

function sorted(dims: Record<string, string>): [string, string][] {
  return Object.entries(dims).sort(([a], [b]) => a.localeCompare(b));
}
