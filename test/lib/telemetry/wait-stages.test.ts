// /metrics shows where the wait goes: sluice_wait_seconds by stage, tier and model, fed by the
// dispatcher's own events (one interval per observation, so sums by stage split the wait).
import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { encodeEnvelope } from '../../../lib/envelope.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createPrometheusSink } from '../../../lib/telemetry/prometheus.js';
import { createTelemetry } from '../../../lib/telemetry/telemetry.js';
import { waitStages } from '../../../lib/telemetry/wait-stages.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { dispatcherOnSim } from '../dispatch/on-sim.js';
import { envelope, policyWith, recordingSink } from './helpers.js';

describe('wait stages', () => {
  it('maps each event to the interval it closes', () => {
    const e = envelope('t0');
    expect(waitStages({ type: 'delivered', envelope: e, attempt: 1, first: true, sinceEnqueueMs: 40 })).toEqual([
      { stage: 'broker', ms: 40 },
    ]);
    expect(
      waitStages({
        type: 'delivered',
        envelope: e,
        attempt: 1,
        first: false,
        sinceEnqueueMs: 900,
        parkedMs: 500,
        parkedBy: 'pace',
      }),
    ).toEqual([{ stage: 'suspend_pace', ms: 500 }]);
    expect(
      waitStages({
        type: 'delivered',
        envelope: e,
        attempt: 2,
        first: false,
        sinceEnqueueMs: 900,
        parkedMs: 1000,
        parkedBy: 'retry',
      }),
    ).toEqual([{ stage: 'retry', ms: 1000 }]);
    // Redelivered to a dispatcher that did not send it back: nothing it could measure.
    expect(waitStages({ type: 'delivered', envelope: e, attempt: 2, first: false, sinceEnqueueMs: 900 })).toEqual([]);
    expect(waitStages({ type: 'suspended', envelope: e, ms: 50, cause: 'capacity', heldMs: 20_000 })).toEqual([
      { stage: 'slot', ms: 20_000 },
    ]);
    expect(waitStages({ type: 'suspended', envelope: e, ms: 500, cause: 'pace' })).toEqual([]);
    expect(waitStages({ type: 'started', envelope: e, queueWaitMs: 700, slotWaitMs: 30 })).toEqual([
      { stage: 'slot', ms: 30 },
    ]);
    expect(
      waitStages({ type: 'completed', envelope: e, status: 200, totalMs: 2000, upstreamMs: 1200, firstTokenMs: 90 }),
    ).toEqual([
      { stage: 'upstream', ms: 1200 },
      { stage: 'first_token', ms: 90 },
    ]);
    // A hostile parkedBy never reaches a label through the prototype.
    expect(
      waitStages({
        type: 'delivered',
        envelope: e,
        attempt: 1,
        first: false,
        sinceEnqueueMs: 1,
        parkedMs: 1,
        parkedBy: 'toString' as never,
      }),
    ).toEqual([]);
  });

  it('deliveries and slot waits feed only the wait histogram, not the outcome counters', () => {
    const clock = new VirtualClock(1_000_000);
    const sink = recordingSink();
    const policy = policyWith(1);
    const telemetry = createTelemetry({ clock, log: silentLogger, policy: () => policy, sinks: [sink] });
    const e = envelope('t0', 'realtime', clock.now());
    telemetry.onDispatch({ type: 'delivered', envelope: e, attempt: 1, first: true, sinceEnqueueMs: 12 });
    telemetry.onDispatch({ type: 'awaiting-slot', envelope: e });
    expect(sink.counts).toEqual([]);
    expect(sink.observations).toEqual([
      { name: 'wait', labels: { stage: 'broker', tier: 'realtime', model: 'm' }, ms: 12 },
    ]);
  });

  it('GET /metrics: a paced request’s broker, Suspend, slot and upstream time, from the real dispatcher', async () => {
    const clock = new VirtualClock(1_700_000_000_000);
    const raw = policyWith(1);
    const policy = parsePolicy({
      ...raw,
      models: { m: { slots: 1, upstreams: ['http://gpu/v1'] } },
      // A pace wait longer than the dispatcher holds locally, so b is Suspended.
      defaults: { ...raw.defaults, accountModel: { ...raw.defaults.accountModel, rate: 0.5, burst: 1 } },
    });
    const prometheus = createPrometheusSink();
    const telemetry = createTelemetry({ clock, log: silentLogger, policy: () => policy, sinks: [prometheus] });
    // 60 tokens at 50 ms: a's call outlasts b's pace wait, so b then waits for the slot.
    const gpu = createGpuSim({
      clock,
      models: ['m'],
      slots: 1,
      baseTokenMs: 50,
      minOutputTokens: 60,
      maxOutputTokens: 60,
    });
    const { dispatch, events } = dispatcherOnSim({ clock, gpu, policy, onEvent: (e) => telemetry.onDispatch(e) });
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const a = { ...envelope('t0', 'realtime', clock.now()), body };
    const b = { ...envelope('t0', 'realtime', clock.now()), body };
    const msg = (e: typeof a) => ({ messageId: e.id, liteTopic: e.liteTopic, body: encodeEnvelope(e), attempt: 1 });
    await clock.advance(100);
    const first = dispatch(msg(a));
    const paced = await dispatch(msg(b));
    expect(paced.kind).toBe('suspend');
    await clock.advance(paced.kind === 'suspend' ? paced.ms : 0);
    const second = dispatch(msg(b));
    await clock.advance(30_000);
    expect(await Promise.all([first, second])).toEqual([{ kind: 'success' }, { kind: 'success' }]);
    expect(events.filter((e) => e.type === 'completed').map((e) => e.type === 'completed' && e.status)).toEqual([
      200, 200,
    ]);

    const text = await prometheus.scrape();
    const sum = (stage: string) =>
      Number(
        new RegExp(`sluice_wait_seconds_sum\\{stage="${stage}",tier="realtime",model="m"\\} ([0-9.e-]+)`).exec(
          text,
        )?.[1],
      );
    const count = (stage: string) =>
      Number(
        new RegExp(`sluice_wait_seconds_count\\{stage="${stage}",tier="realtime",model="m"\\} (\\d+)`).exec(text)?.[1],
      );
    expect(text).toContain('# TYPE sluice_wait_seconds histogram');
    expect(count('broker')).toBe(2);
    expect(sum('broker')).toBeCloseTo(0.2, 6);
    expect(count('suspend_pace')).toBe(1);
    expect(sum('suspend_pace')).toBeCloseTo((paced.kind === 'suspend' ? paced.ms : NaN) / 1000, 6);
    // b waited in flow control while a held the only slot.
    expect(count('slot')).toBe(2);
    const slotWait = events.find((e) => e.type === 'started' && e.envelope.id === b.id);
    expect(slotWait?.type === 'started' ? slotWait.slotWaitMs : 0).toBeGreaterThan(100);
    expect(sum('slot')).toBeCloseTo((slotWait?.type === 'started' ? slotWait.slotWaitMs! : NaN) / 1000, 3);
    expect(count('upstream')).toBe(2);
    const upstream = events
      .filter((e) => e.type === 'completed')
      .reduce((s, e) => s + (e.type === 'completed' ? e.upstreamMs! : 0), 0);
    expect(sum('upstream')).toBeCloseTo(upstream / 1000, 6);
    expect(upstream).toBeGreaterThanOrEqual(2 * 3000);
  });
});
