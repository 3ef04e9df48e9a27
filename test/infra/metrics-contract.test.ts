/**
 * Every custom metric an alarm or a scaling policy of the synthesized stacks reads is
 * emitted, with the same namespace, name and dimensions (names and values), by the process
 * it watches: the edge's EMF for admission and spill metrics, the dispatcher's for backlog
 * and in-flight. Each process's telemetry is built by the same function its entry point uses.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDispatcherTelemetry } from '../../functions/dispatcher/telemetry.ts';
import { createEdgeTelemetry } from '../../functions/edge/telemetry.ts';
import { METRIC_EMITTER, METRICS, SLUICE_NAMESPACE } from '../../functions/runtime/contract.ts';
import { VirtualClock } from '../../lib/clock/virtual-clock.ts';
import { admitted, captureLogger, envelope, policyWith, refused } from '../lib/telemetry/helpers.ts';
import { emfMetrics, sameMetric, watchedMetrics, type MetricId } from '../../scripts/rehearse/metrics.ts';
import { synthesize, type Synthesized } from './helpers.ts';

const STAGE = 'metrics';
const EMITTER: Record<string, 'edge' | 'dispatcher'> = METRIC_EMITTER;

const watched = (v: Synthesized) =>
  watchedMetrics(
    v.assembly.stacks.map((s) => ({
      stack: s.stackName,
      ...(s.template as { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> }),
    })),
    SLUICE_NAMESPACE,
  );

/** Runs `work` and returns the EMF metrics it wrote to stdout. */
function captureEmf(work: () => void): MetricId[] {
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
  return emfMetrics(lines.join('').split('\n'));
}

let v: Synthesized;
const emitted: Record<'edge' | 'dispatcher', MetricId[]> = { edge: [], dispatcher: [] };
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
      const match = emitted[process!].find((e) => sameMetric(e, w));
      expect(
        match,
        `${w.alarm}: ${w.namespace}/${w.name} ${JSON.stringify(w.dims)} not in the ${process} EMF`,
      ).toBeDefined();
    }
  });

  it('dashboard-only contract metrics are emitted too', () => {
    for (const [name, process] of Object.entries(EMITTER)) {
      expect(
        emitted[process].some((e) => e.name === name && e.dims.Stage === STAGE),
        name,
      ).toBe(true);
    }
  });
});
