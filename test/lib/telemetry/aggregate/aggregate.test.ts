import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../lib/clock/virtual-clock.js';
import { defaultLimits, defaultTiers } from '../../../../lib/policy/defaults.js';
import { parsePolicy } from '../../../../lib/policy/schema.js';
import { createEmbeddedStore } from '../../../../lib/store/embedded.js';
import { createSharedLabels } from '../../../../lib/telemetry/aggregate/labels.js';
import { AGGREGATE } from '../../../../lib/telemetry/aggregate/layout.js';
import { createAggregateSink } from '../../../../lib/telemetry/aggregate/sink.js';
import { readTrace } from '../../../../lib/telemetry/aggregate/trace.js';
import { createDeploymentView } from '../../../../lib/telemetry/aggregate/view.js';

const policy = parsePolicy({
  tiers: defaultTiers,
  defaults: defaultLimits,
  models: { m: { slots: 4, upstreams: ['http://127.0.0.1:1/v1'] } },
  tenants: { a: {}, b: { paused: true } },
  accounts: {},
});

function admission(tenant: string, id: string, outcome: 'admitted' | 'rejected' = 'admitted') {
  return {
    outcome,
    id,
    tenant,
    account: `${tenant}-app`,
    tier: 'batch',
    model: 'm',
    liteTopic: `batch-${tenant}-m`,
    reason: outcome === 'rejected' ? 'tenant:requests' : undefined,
  };
}

describe('deployment aggregate', () => {
  it('sums the flow of several instances into one view', async () => {
    const clock = new VirtualClock(1_000_000);
    const store = createEmbeddedStore(clock);
    const edge1 = createAggregateSink({
      store,
      clock,
      instance: 'edge-1',
      role: 'edge',
      describe: () => ({ policyCheckedAt: clock.now() - 2_000 }),
    });
    const edge2 = createAggregateSink({ store, clock, instance: 'edge-2', role: 'edge' });
    const disp = createAggregateSink({
      store,
      clock,
      instance: 'dispatcher-1',
      role: 'dispatcher',
      describe: () => ({ slots: { m: { batch: 2 } } }),
    });
    for (let i = 0; i < 5; i++) edge1.onAdmission(admission('a', `a${i}`));
    for (let i = 0; i < 3; i++) edge2.onAdmission(admission('b', `b${i}`, 'rejected'));
    edge2.onAdmission(admission('a', 'a5'));
    const envelope = { id: 'a0', tier: 'batch', tenant: 'a', model: 'm', liteTopic: 'batch-a-m' };
    disp.onDispatch({ type: 'suspended', envelope, ms: 100, cause: 'capacity' });
    disp.onDispatch({ type: 'started', envelope, queueWaitMs: 120 });
    disp.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 300 });
    await Promise.all([edge1.flush(), edge2.flush(), disp.flush()]);

    const view = createDeploymentView({ store, clock, policy: () => policy });
    const s = await view.live();
    expect(s.tenants.map((t) => [t.tenant, t.admitted, t.refused, t.queued, t.paused])).toEqual([
      ['a', 6, 0, 5, false],
      ['b', 0, 3, 0, true],
    ]);
    expect(s.liteTopics).toEqual([expect.objectContaining({ liteTopic: 'batch-a-m', depth: 5 })]);
    expect(s.gpu[0]!.tiers.find((t) => t.tier === 'batch')!.inUse).toBe(2);
    expect(s.totals).toMatchObject({ admitted: 6, refused: 3, completed: 1, suspended: 1 });
    expect(s.instances.map((i) => i.instance).sort()).toEqual(['dispatcher-1', 'edge-1', 'edge-2']);
    expect(s.instances.find((i) => i.instance === 'edge-1')!.policyAgeMs).toBe(2_000);

    // Past the window the flow is gone, and instances that stopped flushing leave the view.
    await clock.advance(20_000);
    await edge1.flush();
    const later = await view.live();
    expect(later.tenants.map((t) => [t.tenant, t.admitted])).toEqual([['a', 0]]);
    expect(later.instances.map((i) => i.instance)).toEqual(['edge-1']);
  });

  it('keeps a request trace across instances and trace buckets, in time order', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const edge = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
    const disp = createAggregateSink({ store, clock, instance: 'dispatcher-1', role: 'dispatcher' });
    edge.onAdmission({
      ...admission('a', 'r1'),
      windows: [{ scope: 'tenant', unit: 'requests', limit: 10, remaining: 9 }],
    });
    await clock.advance(5);
    const envelope = { id: 'r1', tier: 'batch', tenant: 'a', model: 'm', liteTopic: 'batch-a-m' };
    disp.onDispatch({ type: 'suspended', envelope, ms: 50, cause: 'pace' });
    await clock.advance(2 * 60_000);
    disp.onDispatch({ type: 'suspended', envelope, ms: 20, cause: 'capacity' });
    // The request waits minutes: its steps land in the buckets of two minutes.
    await disp.flush();
    await clock.advance(2 * 60_000);
    disp.onDispatch({ type: 'started', envelope, queueWaitMs: 75 });
    disp.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 90 });
    await disp.flush();
    // The edge flushes last: the trace is still in time order.
    await edge.flush();
    const steps = await readTrace(store, 'r1', clock.now());
    expect(steps!.map((s) => [s.step, s.by])).toEqual([
      ['admitted', 'edge-1'],
      ['suspended', 'dispatcher-1'],
      ['suspended', 'dispatcher-1'],
      ['started', 'dispatcher-1'],
      ['completed', 'dispatcher-1'],
    ]);
    expect(steps![0]).toMatchObject({ windows: [{ scope: 'tenant', remaining: 9 }], liteTopic: 'batch-a-m' });
    expect(steps![2]).toMatchObject({ cause: 'capacity', ms: 20 });
    expect(await readTrace(store, 'unknown', clock.now())).toBeUndefined();
    expect(await readTrace(store, 'x'.repeat(500), clock.now())).toBeUndefined();
    // Each bucket expires on its own: the older minute goes first.
    await clock.advance(AGGREGATE.traceTtlMs - 60_000);
    const left = await readTrace(store, 'r1', clock.now());
    expect(left!.map((s) => s.step)).toEqual(['admitted', 'started', 'completed']);
    await clock.advance(2 * 60_000);
    expect(await readTrace(store, 'r1', clock.now())).toBeUndefined();
  });

  it('keeps the first and the latest steps of a request that writes more than a field holds', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const edge = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
    const disp = createAggregateSink({ store, clock, instance: 'dispatcher-1', role: 'dispatcher' });
    edge.onAdmission(admission('a', 'r1'));
    await edge.flush();
    const envelope = { id: 'r1', tier: 'batch', tenant: 'a', model: 'm', liteTopic: 'batch-a-m' };
    for (let i = 0; i < 200; i++) {
      disp.onDispatch({ type: 'suspended', envelope, ms: 100, cause: 'capacity' });
      await clock.advance(100);
      if (i % 5 === 4) await disp.flush();
    }
    disp.onDispatch({ type: 'started', envelope, queueWaitMs: 20_000 });
    await disp.flush();
    disp.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 20_100 });
    await disp.flush();
    const steps = (await readTrace(store, 'r1', clock.now()))!.map((s) => s.step);
    expect(steps.slice(0, 2)).toEqual(['admitted', 'suspended']);
    expect(steps.slice(-2)).toEqual(['started', 'completed']);
    expect(steps.length).toBeLessThan(200);
  });

  it('traces at most traceMaxIds new requests per bucket; those it traces still append', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const edge = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
    const disp = createAggregateSink({ store, clock, instance: 'dispatcher-1', role: 'dispatcher' });
    const traced = AGGREGATE.traceMaxIds - 1;
    for (let i = 0; i <= traced; i++) edge.onAdmission(admission('a', `r${i}`));
    await edge.flush();
    const trace = async (id: string) => (await readTrace(store, id, clock.now()))?.map((s) => s.step);
    expect(await trace(`r${traced - 1}`)).toEqual(['admitted']);
    expect(await trace(`r${traced}`)).toBeUndefined();
    const envelope = (id: string) => ({ id, tier: 'batch', tenant: 'a', model: 'm', liteTopic: 'batch-a-m' });
    disp.onDispatch({ type: 'completed', envelope: envelope('r0'), status: 200, totalMs: 9 });
    edge.onAdmission(admission('a', 'late'));
    // A step bigger than a field may hold is not kept.
    edge.onAdmission(admission('x'.repeat(AGGREGATE.traceMaxBytes), 'big'));
    await Promise.all([disp.flush(), edge.flush()]);
    expect(await trace('r0')).toEqual(['admitted', 'completed']);
    expect(await trace('late')).toBeUndefined();
    await clock.advance(AGGREGATE.traceBucketMs);
    edge.onAdmission(admission('a', 'next-minute'));
    edge.onAdmission(admission('x'.repeat(AGGREGATE.traceMaxBytes), 'big'));
    await edge.flush();
    expect(await trace('next-minute')).toEqual(['admitted']);
    expect(await trace('big')).toBeUndefined();
  });

  it('names the same top tenants in every process', async () => {
    const clock = new VirtualClock(60_000);
    const store = createEmbeddedStore(clock);
    const edge = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
    const load = { t1: 5, t2: 9, t3: 1, t4: 7 };
    for (const [tenant, n] of Object.entries(load))
      for (let i = 0; i < n; i++) edge.onAdmission(admission(tenant, `${tenant}-${i}`));
    await edge.flush();
    const p1 = createSharedLabels({ store, clock, size: 2 });
    const p2 = createSharedLabels({ store, clock, size: 2 });
    expect([...(await p1.refresh())].sort()).toEqual(['t2', 't4']);
    // A later burst does not change this period's decision: the second process reads the first's.
    for (let i = 0; i < 50; i++) edge.onAdmission(admission('t3', `late-${i}`));
    await edge.flush();
    expect([...(await p2.refresh())].sort()).toEqual(['t2', 't4']);
    expect([p1.label('t3'), p2.label('t3'), p1.label('t2'), p2.label('t2')]).toEqual(['other', 'other', 't2', 't2']);
    // The next period decides afresh, from the load of the moment.
    await clock.advance(30_000);
    for (let i = 0; i < 3; i++) edge.onAdmission(admission('t3', `next-${i}`));
    await edge.flush();
    expect(await p2.refresh()).toEqual(['t3']);
    expect(p1.label('t3')).toBe('other');
    await p1.refresh();
    expect(p1.label('t3')).toBe('t3');
  });

  it('stays within its caps however many tenants pass', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const edge = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
    for (let i = 0; i < 5_000; i++) edge.onAdmission(admission(`tenant-${i}`, `r${i}`, 'rejected'));
    await edge.flush();
    const view = createDeploymentView({ store, clock, policy: () => policy });
    const s = await view.live(10_000);
    // 2,000 fields a bucket: tenants past the cap fold into the overflow, which the view leaves out.
    expect(s.tenants.length).toBeLessThan(2_000);
    expect(s.tenants.length).toBeGreaterThan(500);
  });
});
