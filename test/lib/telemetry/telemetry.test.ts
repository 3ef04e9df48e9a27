import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createTelemetry, type TelemetryOptions } from '../../../lib/telemetry/telemetry.js';
import { admitted, captureLogger, envelope, policyWith, recordingSink, refused } from './helpers.js';

function setup(overrides: Partial<TelemetryOptions> = {}) {
  const clock = new VirtualClock(1_700_000_000_000);
  const log = captureLogger();
  const sink = recordingSink();
  const policy = policyWith(overrides.topTenants ? 20 : 3);
  const telemetry = createTelemetry({ clock, log, policy: () => policy, sinks: [sink], ...overrides });
  return { clock, log, sink, policy, telemetry };
}

describe('telemetry core: counters', () => {
  it('counts admitted, refused by reason and warned per tier, tenant and model', () => {
    const { telemetry, sink } = setup();
    const e = envelope('t0');
    telemetry.onAdmission(admitted(e));
    telemetry.onAdmission(admitted(envelope('t0'), 'account-model requests at 85% of 600 per minute'));
    telemetry.onAdmission(refused('t1', 'tenant:tokens'));
    telemetry.onAdmission(refused('t1', 'reservoir', 'batch'));
    expect(sink.total('admitted', { tier: 'realtime', tenant: 't0', model: 'm' })).toBe(2);
    expect(sink.total('warned', { tenant: 't0' })).toBe(1);
    expect(sink.total('refused', { tenant: 't1', reason: 'tenant:tokens', tier: 'realtime' })).toBe(1);
    expect(sink.total('refused', { tenant: 't1', reason: 'reservoir', tier: 'batch' })).toBe(1);
    telemetry.onAdmission({
      ...admitted(envelope('t2', 'batch')),
      degraded: 'over the soft requests quota (80 per minute): paced at 1/2',
    });
    expect(sink.total('degraded', { tenant: 't2', tier: 'batch' })).toBe(1);
  });

  it('follows a request through the dispatcher: suspended, dispatched, completed, absorbed only when it was held', () => {
    const { telemetry, sink, clock } = setup();
    const held = envelope('t0', 'realtime', clock.now());
    const straight = envelope('t0', 'realtime', clock.now());
    telemetry.onDispatch({ type: 'suspended', envelope: held, ms: 120, cause: 'pace' });
    telemetry.onDispatch({ type: 'started', envelope: held, queueWaitMs: 130 });
    telemetry.onDispatch({ type: 'completed', envelope: held, status: 200, totalMs: 400 });
    telemetry.onDispatch({ type: 'started', envelope: straight, queueWaitMs: 3 });
    telemetry.onDispatch({ type: 'completed', envelope: straight, status: 200, totalMs: 250 });
    expect(sink.total('suspended', { cause: 'pace' })).toBe(1);
    expect(sink.total('dispatched')).toBe(2);
    expect(sink.total('completed')).toBe(2);
    expect(sink.total('absorbed')).toBe(1);
    expect(sink.observations.filter((o) => o.name === 'queue_wait').map((o) => o.ms)).toEqual([130, 3]);
    expect(sink.observations.filter((o) => o.name === 'end_to_end').map((o) => o.ms)).toEqual([400, 250]);
  });

  it('counts retries, failures and expiries, both of the last two as dead letters', () => {
    const { telemetry, sink, clock } = setup();
    const e = envelope('t0', 'batch', clock.now());
    telemetry.onDispatch({ type: 'started', envelope: e, queueWaitMs: 1 });
    telemetry.onDispatch({ type: 'retrying', envelope: e, attempt: 1, reason: 'upstream answered 503' });
    telemetry.onDispatch({ type: 'started', envelope: e, queueWaitMs: 1_000 });
    telemetry.onDispatch({ type: 'failed', envelope: e, status: 502, reason: 'upstream answered 503' });
    telemetry.onDispatch({ type: 'expired', envelope: envelope('t1', 'realtime', clock.now() - 11_000) });
    expect(sink.total('retried')).toBe(1);
    expect(sink.total('expired', { tenant: 't1' })).toBe(1);
    expect(sink.total('dead_lettered', { kind: 'failed', tier: 'batch' })).toBe(1);
    expect(sink.total('dead_lettered', { kind: 'expired' })).toBe(1);
    // Nothing stays counted as holding a GPU slot.
    expect(
      telemetry
        .gauges()
        .filter((g) => g.name === 'gpu_slots_in_use')
        .every((g) => g.value === 0),
    ).toBe(true);
  });

  it('reads congestion events and pace changes as pace changes, by direction', () => {
    const { telemetry, sink } = setup();
    telemetry.recordPaceChange({ model: 'm', factor: 0.5 });
    telemetry.onDispatch({ type: 'congestion', model: 'm', factor: 0.75 } as never);
    telemetry.recordPaceChange({ model: 'm', factor: 0.75 }); // no change
    expect(sink.total('pace_changes', { model: 'm', direction: 'down' })).toBe(1);
    expect(sink.total('pace_changes', { model: 'm', direction: 'up' })).toBe(1);
    expect(telemetry.gauges().find((g) => g.name === 'pace_factor')?.value).toBe(0.75);
  });
});

describe('telemetry core: bounded labels', () => {
  it('names only the top N tenants; every other tenant is "other"', () => {
    const { telemetry, sink } = setup({ topTenants: 3 });
    for (let i = 0; i < 20; i++) for (let n = 0; n < 5; n++) telemetry.onAdmission(admitted(envelope(`t${i}`)));
    const tenants = new Set(sink.counts.map((c) => c.labels.tenant));
    expect(tenants.size).toBeLessThanOrEqual(4);
    expect(tenants.has('other')).toBe(true);
    expect(sink.total('admitted')).toBe(100);
    const depthLabels = new Set(
      telemetry
        .gauges()
        .filter((g) => g.name === 'reservoir_depth')
        .map((g) => g.labels.tenant),
    );
    expect(depthLabels.size).toBeLessThanOrEqual(4);
  });
});

describe('telemetry core: gauges', () => {
  it('counts slots in use per tier against the reserved share, and reservoir depth from events', () => {
    const { telemetry, clock } = setup();
    const a = envelope('t0', 'realtime', clock.now());
    const b = envelope('t1', 'batch', clock.now());
    for (const e of [a, b, envelope('t0', 'realtime', clock.now())]) telemetry.onAdmission(admitted(e));
    telemetry.onDispatch({ type: 'started', envelope: a, queueWaitMs: 1 });
    telemetry.onDispatch({ type: 'started', envelope: b, queueWaitMs: 1 });
    const g = telemetry.gauges();
    const get = (name: string, labels: Record<string, string>) =>
      g.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
    expect(get('gpu_slots_capacity', { model: 'm' })).toBe(10);
    expect(get('gpu_slots_reserved', { model: 'm', tier: 'realtime' })).toBe(6);
    expect(get('gpu_slots_reserved', { model: 'm', tier: 'batch' })).toBe(2);
    expect(get('gpu_slots_in_use', { model: 'm', tier: 'realtime' })).toBe(1);
    expect(get('gpu_slots_in_use', { model: 'm', tier: 'batch' })).toBe(1);
    expect(get('reservoir_depth', { tier: 'realtime', tenant: 't0' })).toBe(2);
    telemetry.onDispatch({ type: 'completed', envelope: a, status: 200, totalMs: 5 });
    expect(telemetry.gauges().find((s) => s.name === 'reservoir_depth' && s.labels.tenant === 't0')?.value).toBe(1);
  });

  it('asks the queue for depth when it can tell', () => {
    const { telemetry } = setup({ depth: () => 7 });
    telemetry.onAdmission(admitted(envelope('t2')));
    expect(telemetry.gauges().find((s) => s.name === 'reservoir_depth')?.value).toBe(7);
    expect(telemetry.live().liteTopics[0]).toMatchObject({ tenant: 't2', tier: 'realtime', depth: 7 });
  });
});

describe('telemetry core: live view', () => {
  it('puts the tenant bursting now at the top, with its accounts, and forgets it after the window', async () => {
    const { telemetry, clock } = setup();
    telemetry.onAdmission(admitted(envelope('t0')));
    for (let i = 0; i < 30; i++) telemetry.onAdmission(admitted(envelope('t2', 'batch')));
    for (let i = 0; i < 10; i++) telemetry.onAdmission(refused('t2', 'account-model:requests', 'batch'));
    let live = telemetry.live();
    expect(live.tenants[0]).toMatchObject({ tenant: 't2', admitted: 30, refused: 10, perSecond: 4 });
    expect(live.accounts[0]).toMatchObject({ account: 'b-t2', tenant: 't2', tier: 'batch' });
    await clock.advance(11_000);
    live = telemetry.live();
    // Still waiting (counted from events) keeps it listed, with no rate.
    expect(live.tenants.find((t) => t.tenant === 't2')).toMatchObject({ perSecond: 0, queued: 30 });
  });

  it('keeps a per-tier history of admitted, refused and absorbed per step', async () => {
    const { telemetry, clock } = setup({ historyMs: 10_000, bucketMs: 1_000 });
    const e = envelope('t0', 'batch', clock.now());
    telemetry.onAdmission(admitted(e));
    telemetry.onAdmission(refused('t0', 'tenant:requests', 'batch'));
    await clock.advance(2_000);
    telemetry.onDispatch({ type: 'started', envelope: e, queueWaitMs: 2_000 });
    telemetry.onDispatch({ type: 'completed', envelope: e, status: 200, totalMs: 2_100 });
    const h = telemetry.live().history;
    expect(h.stepMs).toBe(1_000);
    const batch = h.tiers.batch!;
    expect(batch.admitted).toHaveLength(10);
    expect(batch.admitted[7]).toBe(1);
    expect(batch.refused[7]).toBe(1);
    expect(batch.absorbed[9]).toBe(1);
    expect(batch.completed[9]).toBe(1);
    expect(h.tiers.realtime!.admitted.every((v) => v === 0)).toBe(true);
  });

  it('lists paused tenants and accounts, and bookings that have not ended, from the policy', () => {
    const clock = new VirtualClock(1_000_000);
    const base = policyWith(2);
    const policy = {
      ...base,
      tenants: { ...base.tenants, t1: { ...base.tenants.t1!, paused: true } },
      accounts: { ...base.accounts, 'a-t0': { ...base.accounts['a-t0']!, paused: true } },
      reservations: [
        { id: 'old', tenant: 't0', startsAt: 0, endsAt: 500_000, extra: { rpm: 10, tpm: 0, reservoir: 0 } },
        { id: 'now', tenant: 't0', startsAt: 900_000, endsAt: 2_000_000, extra: { rpm: 100, tpm: 0, reservoir: 0 } },
        {
          id: 'later',
          tenant: 't1',
          model: 'm',
          startsAt: 3_000_000,
          endsAt: 4_000_000,
          extra: { rpm: 0, tpm: 5_000, reservoir: 0 },
        },
      ],
    };
    const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy });
    const live = telemetry.live();
    expect(live.paused).toEqual({ tenants: ['t1'], accounts: ['a-t0'] });
    expect(live.bookings.map((b) => [b.id, b.active])).toEqual([
      ['now', true],
      ['later', false],
    ]);
  });
});

describe('telemetry core: alerts', () => {
  it('realtime near its limit: one structured log event per cooldown, a metric, a dashboard record', async () => {
    const { telemetry, log, sink, clock } = setup({ alertCooldownMs: 30_000 });
    for (let i = 0; i < 5; i++)
      telemetry.onAdmission(admitted(envelope('t0'), 'tenant requests at 90% of 6000 per minute'));
    // Batch near its limit is degraded, not alerted.
    telemetry.onAdmission(admitted(envelope('t1', 'batch'), 'account-model requests at 85% of 600 per minute'));
    const alerts = log.lines.filter((l) => l.obj.event === 'alert');
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      level: 'warn',
      obj: { alert: 'realtime-near-limit', tier: 'realtime', tenant: 't0', account: 'a-t0' },
    });
    expect(sink.total('alerts', { alert: 'realtime-near-limit', tier: 'realtime' })).toBe(1);
    expect(telemetry.live().activeAlerts.map((a) => a.alert)).toEqual(['realtime-near-limit']);
    // Warnings fold per account and model, latest first.
    expect(telemetry.live().warnings.map((w) => [w.account, w.count])).toEqual([
      ['b-t1', 1],
      ['a-t0', 5],
    ]);
    await clock.advance(30_000);
    telemetry.onAdmission(refused('t0', 'account-model:requests'));
    const again = log.lines.filter((l) => l.obj.event === 'alert');
    expect(again).toHaveLength(2);
    expect(again[1]!.obj).toMatchObject({ repeats: 4, reason: 'account-model:requests' });
    // A paused tenant's refusals are not a limit alert.
    telemetry.onAdmission(refused('t2', 'tenant-paused'));
    expect(log.lines.filter((l) => l.obj.event === 'alert')).toHaveLength(2);
  });

  it('dead letters appearing, spillover in use, and a LiteTopic waiting past its maximum', () => {
    const { telemetry, log, clock, sink } = setup();
    const e = envelope('t0', 'realtime', clock.now());
    telemetry.onDispatch({ type: 'failed', envelope: e, status: 502, reason: 'upstream answered 503' });
    telemetry.recordSpill(envelope('t1'));
    telemetry.onDispatch({ type: 'expired', envelope: envelope('t2', 'realtime', clock.now() - 12_000) });
    const names = log.lines.filter((l) => l.obj.event === 'alert').map((l) => l.obj.alert);
    expect(names).toEqual(['dead-letters', 'spillover-in-use', 'dead-letters', 'queue-wait-above-max']);
    expect(sink.total('spilled', { tenant: 't1' })).toBe(1);
    const wait = log.lines.find((l) => l.obj.alert === 'queue-wait-above-max')!;
    expect(wait.obj).toMatchObject({ basis: 'observed', waitMs: 12_000, maxQueueWaitMs: 10_000, tenant: 't2' });
  });

  it("raises the wait alert when a LiteTopic's backlog, at its pace, would take longer than the tier allows", () => {
    // realtime: 10 per second, 10 s max wait -> more than 100 waiting is too many.
    const { telemetry, log } = setup({ depth: () => 150 });
    telemetry.onAdmission(admitted(envelope('t0')));
    const wait = log.lines.find((l) => l.obj.alert === 'queue-wait-above-max');
    expect(wait?.obj).toMatchObject({ basis: 'expected', depth: 150, expectedWaitMs: 15_000, maxQueueWaitMs: 10_000 });
  });

  it('counts dead letters of the queue engine itself', () => {
    const { telemetry, sink } = setup();
    const e = envelope('t0');
    telemetry.onQueueDeadLetter({
      message: { messageId: 'x', liteTopic: e.liteTopic, body: JSON.stringify(e), attempt: 5 },
      reason: 'handler failed',
    });
    telemetry.onQueueDeadLetter({
      message: { messageId: 'y', liteTopic: 'garbage', body: 'not json', attempt: 5 },
      reason: 'handler failed',
    });
    expect(sink.total('dead_lettered', { kind: 'queue' })).toBe(2);
    expect(sink.total('dead_lettered', { kind: 'queue', tenant: 't0' })).toBe(1);
  });
});

describe('telemetry core: robustness', () => {
  it('never throws into the edge or the dispatcher: a failing sink is logged and the event dropped', () => {
    const { telemetry, log } = setup({
      sinks: [
        {
          count() {
            throw new Error('sink down');
          },
          observe() {},
        },
      ],
    });
    expect(() => telemetry.onAdmission(admitted(envelope('t0')))).not.toThrow();
    expect(() => telemetry.onDispatch({ type: 'started', envelope: envelope('t0'), queueWaitMs: 1 })).not.toThrow();
    expect(log.lines.filter((l) => l.obj.event === 'telemetry-error')).toHaveLength(1);
  });
});
