import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createDispatcher, settleDeadLetter } from '../../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../../lib/dispatch-events.js';
import { encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { createEmbeddedResults } from '../../../lib/results/embedded.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { createEmbeddedAttempts } from '../../../lib/store/attempts.js';
import { reservoirKey, reservoirPlace } from '../../../lib/store/keys.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createInProcessUpstream } from '../../../lib/upstream/in-process.js';
import { basePolicy } from '../policy/fixtures.js';

function world(
  edit: (p: ReturnType<typeof basePolicy>) => void = () => {},
  gpuOver: Partial<Parameters<typeof createGpuSim>[0]> = {},
) {
  const clock = new VirtualClock(1_000_000);
  const raw = basePolicy();
  raw.models.m!.upstreams = ['http://gpu/v1'];
  raw.models.m!.slots = 2;
  edit(raw);
  const policy = parsePolicy(raw);
  const gpu = createGpuSim({
    clock,
    models: ['m'],
    slots: 2,
    baseTokenMs: 10,
    minOutputTokens: 5,
    maxOutputTokens: 5,
    ...gpuOver,
  });
  const store = createEmbeddedStore(clock);
  const results = createEmbeddedResults({ clock });
  const events: DispatchEvent[] = [];
  const dead: string[] = [];
  let n = 0;
  const deps = {
    clock,
    store,
    results,
    upstream: createInProcessUpstream({ fetch: gpu.app.fetch, clock }),
    policy: () => policy,
    log: silentLogger,
    newId: () => `lease-${n++}`,
    onEvent: (e: DispatchEvent) => events.push(e),
    deadLetters: { put: async (_e: Envelope, reason: string) => void dead.push(reason) },
  };
  return { clock, store, results, events, dead, deps, gpu, dispatch: createDispatcher(deps) };
}

let ids = 0;
function envelope(clock: VirtualClock, over: Partial<Envelope> = {}): Envelope {
  return {
    id: `req_${ids++}`,
    account: 'rt',
    tenant: 'acme',
    tier: 'realtime',
    model: 'm',
    liteTopic: 'realtime-acme-m',
    operation: 'chat.completions',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    mode: 'sync',
    enqueuedAt: clock.now(),
    deadline: clock.now() + 10_000,
    tokenEstimate: 100,
    charged: [],
    reservoirKey: reservoirPlace(reservoirKey('acme', 'realtime-acme-m'), 'r1'),
    paceFactor: 1,
    ...over,
  };
}

const message = (e: Envelope, attempt = 1) => ({
  messageId: e.id,
  liteTopic: e.liteTopic,
  body: encodeEnvelope(e),
  attempt,
});

describe('dispatcher', () => {
  it('serves a message and stores the result', async () => {
    const w = world();
    const e = envelope(w.clock);
    const run = w.dispatch(message(e));
    await w.clock.advance(5_000);
    expect(await run).toEqual({ kind: 'success' });
    expect(await w.results.get(e.id)).toMatchObject({ status: 'completed', httpStatus: 200 });
  });

  it('answers expired without calling the model once the deadline has passed', async () => {
    const w = world();
    const e = envelope(w.clock, { deadline: w.clock.now() - 1 });
    expect(await w.dispatch(message(e))).toEqual({ kind: 'success' });
    expect(await w.results.get(e.id)).toMatchObject({ status: 'expired', httpStatus: 504 });
    expect(w.gpu.stats().served).toBe(0);
    expect(w.dead).toEqual(['expired in queue']);
  });

  it('suspends for the pace when the bucket is empty, sleeping only waits shorter than 50 ms', async () => {
    const w = world((p) => {
      p.defaults.accountModel = { ...p.defaults.accountModel, rate: 2, burst: 1 };
    });
    const dispatch = createDispatcher({ ...w.deps, options: { flow: { maxPaceHoldMs: 0 } } });
    const first = dispatch(message(envelope(w.clock)));
    const second = await dispatch(message(envelope(w.clock)));
    expect(second).toEqual({ kind: 'suspend', ms: 500 });
    await w.clock.advance(5_000);
    await first;
    expect(w.events.some((e) => e.type === 'suspended' && e.cause === 'pace')).toBe(true);
  });

  it('holds a short booked pace wait un-acked instead of a Suspend, while the flow-control layer has room', async () => {
    const w = world((p) => {
      p.defaults.accountModel = { ...p.defaults.accountModel, rate: 2, burst: 1 };
    });
    const dispatch = createDispatcher({ ...w.deps, options: { flow: { maxWaiting: 2 } } });
    const running = [dispatch(message(envelope(w.clock))), dispatch(message(envelope(w.clock)))];
    // One place held for pacing at most (half of 2): the third, booked 1 s ahead, goes back to its LiteTopic.
    expect(await dispatch(message(envelope(w.clock)))).toEqual({ kind: 'suspend', ms: 1_000 });
    // The second starts at its booked release, not before.
    await w.clock.advance(400);
    expect(w.events.filter((e) => e.type === 'started')).toHaveLength(1);
    await w.clock.advance(200);
    expect(w.events.filter((e) => e.type === 'started')).toHaveLength(2);
    await w.clock.advance(5_000);
    expect(await Promise.all(running)).toEqual([{ kind: 'success' }, { kind: 'success' }]);
    expect(w.events.filter((e) => e.type === 'suspended')).toHaveLength(1);
  });

  it('slows a degraded envelope by its pace factor', async () => {
    const w = world((p) => {
      p.defaults.accountModel = { ...p.defaults.accountModel, rate: 2, burst: 1 };
    });
    void w.dispatch(message(envelope(w.clock, { paceFactor: 0.25 })));
    expect(await w.dispatch(message(envelope(w.clock, { paceFactor: 0.25 })))).toEqual({ kind: 'suspend', ms: 2_000 });
    await w.clock.advance(10_000);
  });

  it('holds a request un-acked while the model has no free slot, and starts it when one frees (no Suspend)', async () => {
    const w = world();
    const running = [
      w.dispatch(message(envelope(w.clock))),
      w.dispatch(message(envelope(w.clock))),
      w.dispatch(message(envelope(w.clock))),
    ];
    await w.clock.advance(10);
    expect(w.gpu.stats().peakBusy).toBe(2);
    await w.clock.advance(5_000);
    expect(await Promise.all(running)).toEqual([{ kind: 'success' }, { kind: 'success' }, { kind: 'success' }]);
    expect(w.events.some((e) => e.type === 'suspended')).toBe(false);
    expect(w.gpu.stats().served).toBe(3);
    expect(w.gpu.stats().peakBusy).toBe(2);
  });

  it('past the bound of requests waiting for a slot, suspends the newcomer', async () => {
    const w = world();
    const dispatch = createDispatcher({ ...w.deps, options: { flow: { maxWaiting: 1 } } });
    const running = [];
    for (let i = 0; i < 3; i++) {
      running.push(dispatch(message(envelope(w.clock))));
      await w.clock.advance(1);
    }
    const fourth = await dispatch(message(envelope(w.clock)));
    expect(fourth.kind).toBe('suspend');
    expect(w.events.some((e) => e.type === 'suspended' && e.cause === 'capacity')).toBe(true);
    await w.clock.advance(5_000);
    expect(await Promise.all(running)).toEqual([{ kind: 'success' }, { kind: 'success' }, { kind: 'success' }]);
    expect(w.gpu.stats().peakBusy).toBeLessThanOrEqual(2);
  });

  it('holds a paused account’s work in the queue', async () => {
    const w = world((p) => {
      p.accounts.rt!.paused = true;
    });
    expect(await w.dispatch(message(envelope(w.clock)))).toEqual({ kind: 'suspend', ms: 1_000 });
    expect(w.gpu.stats().served).toBe(0);
  });

  it('retries a failing upstream as Failure, then answers 502 and dead-letters on the last attempt', async () => {
    const w = world();
    w.gpu.faults.failNext(503, 5);
    const e = envelope(w.clock);
    const first = w.dispatch(message(e, 1));
    await w.clock.advance(100);
    expect(await first).toEqual({ kind: 'failure', reason: 'upstream answered 503' });
    const second = w.dispatch(message(e, 2));
    await w.clock.advance(100);
    expect(await second).toEqual({ kind: 'failure', reason: 'upstream answered 503' });
    const last = w.dispatch(message(e, 3));
    await w.clock.advance(100);
    expect(await last).toEqual({ kind: 'success' });
    expect(await w.results.get(e.id)).toMatchObject({ status: 'failed', httpStatus: 502 });
    expect(w.dead).toEqual(['upstream answered 503']);
  });

  it('counts failures in the store: a restarted dispatcher, or another one, grants no extra attempt', async () => {
    const w = world();
    w.gpu.faults.failNext(503, 10);
    const e = envelope(w.clock);
    const run = async (dispatch: typeof w.dispatch) => {
      const r = dispatch(message(e, 1));
      await w.clock.advance(100);
      return r;
    };
    const attempts = createEmbeddedAttempts(w.clock);
    const a = createDispatcher({ ...w.deps, attempts });
    const b = createDispatcher({ ...w.deps, attempts });
    // The broker reports attempt 1 every time (its count is no failure count); the store's count decides.
    expect((await run(a)).kind).toBe('failure');
    expect((await run(b)).kind).toBe('failure');
    expect(await run(createDispatcher({ ...w.deps, attempts }))).toEqual({ kind: 'success' });
    expect(await w.results.get(e.id)).toMatchObject({ status: 'failed', httpStatus: 502 });
    expect(w.gpu.stats().faults).toBe(3);
  });

  it('answers a redelivered message from its stored result without calling the model again', async () => {
    const w = world();
    const e = envelope(w.clock);
    const first = w.dispatch(message(e));
    await w.clock.advance(5_000);
    expect(await first).toEqual({ kind: 'success' });
    const served = w.gpu.stats().served;
    // The ack was lost: the broker delivers it again, to this dispatcher or another, even past its deadline.
    expect(await w.dispatch(message(e))).toEqual({ kind: 'success' });
    await w.clock.advance(20_000);
    expect(await createDispatcher(w.deps)(message(e))).toEqual({ kind: 'success' });
    expect(w.gpu.stats().served).toBe(served);
    expect(await w.results.get(e.id)).toMatchObject({ status: 'completed', httpStatus: 200 });
    expect(w.dead).toEqual([]);
  });

  it('serves a request an operator redrove from the dead letters, replacing its earlier failure', async () => {
    const w = world();
    const e = envelope(w.clock);
    await w.results.complete({
      id: e.id,
      tenant: e.tenant,
      status: 'failed',
      httpStatus: 502,
      body: {},
      completedAt: w.clock.now(),
    });
    await w.clock.advance(1_000);
    // `sluice dlq redrive` sends the envelope again with a fresh enqueuedAt and deadline.
    const again = { ...e, enqueuedAt: w.clock.now(), deadline: w.clock.now() + 10_000 };
    const run = w.dispatch(message(again));
    await w.clock.advance(5_000);
    expect(await run).toEqual({ kind: 'success' });
    expect(w.gpu.stats().served).toBe(1);
    expect(await w.results.get(e.id)).toMatchObject({ status: 'completed', httpStatus: 200 });
  });

  it('retries a failed result write, never the upstream call', async () => {
    const w = world();
    let refusals = 3;
    const results = {
      ...w.results,
      complete: async (r: Parameters<typeof w.results.complete>[0]) => {
        if (refusals-- > 0) throw new Error('connection reset');
        return w.results.complete(r);
      },
    };
    const e = envelope(w.clock);
    const run = createDispatcher({ ...w.deps, results })(message(e));
    await w.clock.advance(10_000);
    expect(await run).toEqual({ kind: 'success' });
    expect(w.gpu.stats().served).toBe(1);
    expect(await w.results.get(e.id)).toMatchObject({ status: 'completed' });
  });

  it('a second delivery waits while the call runs elsewhere; a call whose owner vanished is answered, not made again', async () => {
    const w = world();
    const attempts = createEmbeddedAttempts(w.clock);
    const e = envelope(w.clock, { deadline: w.clock.now() + 300_000 });
    // Another dispatcher claimed the call and then died mid-call (kill -9): its claim holds until the lease lapses.
    const held = await attempts.claim(e.id, 'dead-dispatcher', 60_000, 3_600_000);
    expect(held.state).toBe('granted');
    const dispatch = createDispatcher({
      ...w.deps,
      attempts,
      options: { upstreamTimeoutMs: 30_000, resultWriteGiveUpMs: 20_000 },
    });
    expect((await dispatch(message(e))).kind).toBe('suspend');
    await w.clock.advance(60_000);
    expect(await dispatch(message(e))).toEqual({ kind: 'success' });
    expect(w.gpu.stats().served).toBe(0);
    expect(await w.results.get(e.id)).toMatchObject({ status: 'failed', httpStatus: 502 });
    expect(w.dead).toEqual(['the dispatcher serving it stopped mid-call']);
  });

  it('answers a request the broker never took before its deadline with the reason, and gives its place back', async () => {
    const w = world();
    const e = envelope(w.clock);
    const key = reservoirKey('acme', 'realtime-acme-m');
    await w.store.admit({ limits: [], reservoir: { key, max: 1, member: 'r1', holdMs: 60_000 } });
    const reason = 'the broker was unavailable until the request deadline (held in the SQS spillover)';
    await settleDeadLetter(w.deps, { message: message(e, 1), reason, httpStatus: 503 });
    const result = await w.results.get(e.id);
    expect(result).toMatchObject({ status: 'failed', httpStatus: 503 });
    expect(JSON.stringify(result)).toContain('queue_unavailable');
    expect(JSON.stringify(result)).toContain(reason);
    expect(w.dead).toEqual([reason]);
    expect(
      (await w.store.admit({ limits: [], reservoir: { key, max: 1, member: 'r2', holdMs: 60_000 } })).allowed,
    ).toBe(true);
  });

  it("answers at once the places its flow's fair share cannot start in time; delivered later, they are acked unserved", async () => {
    const w = world((p) => {
      p.tiers.realtime!.maxQueueWaitMs = 2_000;
    });
    const key = reservoirKey('acme', 'realtime-acme-m');
    // Calls of 50 ms on 2 slots: the model's speed is known.
    const warm = [0, 1].map(() => w.dispatch(message(envelope(w.clock))));
    await w.clock.advance(1_000);
    await Promise.all(warm);
    // A flood's LiteTopic: 200 requests admitted, about 80 start within realtime's 2 s.
    const flood = Array.from({ length: 200 }, (_, i) => `p${String(i).padStart(3, '0')}`);
    for (const id of flood)
      await w.store.admit({ limits: [], reservoir: { key, max: 1_000, member: id, holdMs: 2_000 } });
    const envelopes = new Map(
      flood.map((id) => [id, envelope(w.clock, { id, reservoirKey: reservoirPlace(key, id) })]),
    );
    const held = (id: string) => envelopes.get(id)!;
    // Its first four come to the dispatcher at once: two start, two wait, and the dispatcher reports.
    const running = flood.slice(0, 4).map((id) => w.dispatch(message(held(id))));
    await w.clock.advance(10);
    const shed = (await Promise.all(flood.map((id) => w.results.get(id)))).flatMap((r, i) =>
      r && r.status !== 'queued' ? [{ id: flood[i]!, r }] : [],
    );
    expect(shed.length).toBeGreaterThan(50);
    // The places kept lead, the shed ones are the last, and the reservoir holds only the kept ones.
    expect(shed.map((s) => s.id)).toEqual(flood.slice(200 - shed.length));
    expect(await w.store.reservoirDepth(key)).toBe(200 - shed.length);
    for (const { r } of shed) {
      expect(r).toMatchObject({ status: 'expired', httpStatus: 429, refusal: { reason: 'fair-share' } });
      expect((r as { refusal?: { retryAfterMs: number } }).refusal?.retryAfterMs).toBeGreaterThan(0);
    }
    await w.clock.advance(5_000);
    await Promise.all(running);
    // One of them surfaces: acked with no call, ended as a refusal, dead-lettered with its reason.
    const served = w.gpu.stats().served;
    const last = shed.at(-1)!.id;
    expect(await w.dispatch(message(held(last)))).toEqual({ kind: 'success' });
    expect(w.gpu.stats().served).toBe(served);
    expect(w.events.filter((e) => e.type === 'expired').map((e) => e.type === 'expired' && e.envelope.id)).toContain(
      last,
    );
    expect(w.dead).toContain('past the fair-share level');
  });

  it('reads a request held a while for a slot again before its call: shed meanwhile by another dispatcher, it ends unserved and frees its slot', async () => {
    // Calls of 2 s on 2 slots.
    const w = world(
      (p) => {
        p.tiers.realtime!.maxQueueWaitMs = 30_000;
      },
      { minOutputTokens: 200, maxOutputTokens: 200 },
    );
    const deadline = w.clock.now() + 30_000;
    const [a, b, shed, next] = [0, 1, 2, 3].map(() => envelope(w.clock, { deadline }));
    const runs = [a, b, shed].map((e) => w.dispatch(message(e!)));
    await w.clock.advance(100);
    // Another dispatcher sheds the waiting one's place and answers its client.
    await w.results.complete({
      id: shed!.id,
      tenant: 'acme',
      status: 'expired',
      httpStatus: 429,
      body: {},
      completedAt: w.clock.now(),
      refusal: { reason: 'fair-share', retryAfterMs: 10_000 },
    });
    const later = w.dispatch(message(next!));
    await w.clock.advance(10_000);
    expect(await Promise.all([...runs, later])).toEqual(Array(4).fill({ kind: 'success' }));
    expect(w.gpu.stats().served, 'no call for the shed one').toBe(3);
    expect(await w.results.get(shed!.id)).toMatchObject({ httpStatus: 429, refusal: { reason: 'fair-share' } });
    expect(await w.results.get(next!.id)).toMatchObject({ status: 'completed' });
    expect(w.dead).toEqual(['past the fair-share level']);
  });

  it('settles a message the engine dead-lettered: the client is answered and the reservoir place given back', async () => {
    const w = world();
    const e = envelope(w.clock);
    const key = reservoirKey('acme', 'realtime-acme-m');
    await w.store.admit({ limits: [], reservoir: { key, max: 1, member: 'r1', holdMs: 60_000 } });
    expect(
      (await w.store.admit({ limits: [], reservoir: { key, max: 1, member: 'r2', holdMs: 60_000 } })).allowed,
    ).toBe(false);
    await settleDeadLetter(w.deps, { message: message(e, 5), reason: 'handler did not return within 60000 ms' });
    expect(await w.results.get(e.id)).toMatchObject({ status: 'failed', httpStatus: 500 });
    expect(
      (await w.store.admit({ limits: [], reservoir: { key, max: 1, member: 'r2', holdMs: 60_000 } })).allowed,
    ).toBe(true);
    expect(w.dead[0]).toMatch(/did not return/);
  });
});
