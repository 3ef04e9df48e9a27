// The events that say where a request's wait went: delivery (first or after a Suspend, and why),
// time held for a slot before a capacity Suspend, and the upstream call with its first token.
import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import type { DispatcherOptions } from '../../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../../lib/dispatch-events.js';
import { encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { basePolicy } from '../policy/fixtures.js';
import { dispatcherOnSim } from './on-sim.js';

function world(edit: (p: ReturnType<typeof basePolicy>) => void = () => {}, options?: DispatcherOptions) {
  const clock = new VirtualClock(1_000_000);
  const raw = basePolicy();
  raw.models.m!.upstreams = ['http://gpu/v1'];
  raw.models.m!.slots = 1;
  edit(raw);
  const policy = parsePolicy(raw);
  // 20 output tokens at 10 ms each: a call holds its slot about 200 ms.
  const gpu = createGpuSim({
    clock,
    models: ['m'],
    slots: 1,
    baseTokenMs: 10,
    minOutputTokens: 20,
    maxOutputTokens: 20,
  });
  const { dispatch, events } = dispatcherOnSim({ clock, gpu, policy, ...(options ? { options } : {}) });
  const of = <T extends DispatchEvent['type']>(type: T, id: string) =>
    events.filter(
      (e): e is Extract<DispatchEvent, { type: T }> => e.type === type && 'envelope' in e && e.envelope.id === id,
    );
  return { clock, gpu, events, dispatch, of };
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
    deadline: clock.now() + 60_000,
    tokenEstimate: 100,
    charged: [],
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

describe('dispatcher: where the wait goes', () => {
  it('a delivery says whether it is the first and, after a Suspend, how long the message was away and why', async () => {
    // A pace wait longer than the dispatcher holds locally (pace holds): this one is Suspended.
    const w = world((p) => {
      p.defaults.accountModel = { ...p.defaults.accountModel, rate: 0.25, burst: 1 };
    });
    const a = envelope(w.clock);
    const first = w.dispatch(message(a));
    const b = envelope(w.clock);
    await w.clock.advance(120);
    expect(await w.dispatch(message(b))).toMatchObject({ kind: 'suspend' });
    expect(w.of('delivered', b.id)).toEqual([
      expect.objectContaining({ first: true, attempt: 1, sinceEnqueueMs: 120 }),
    ]);
    expect(w.of('delivered', b.id)[0]!.parkedBy).toBeUndefined();
    const suspended = w.of('suspended', b.id)[0]!;
    expect(suspended.cause).toBe('pace');
    await w.clock.advance(suspended.ms + 35);
    const again = w.dispatch(message(b));
    await w.clock.advance(5_000);
    await Promise.all([first, again]);
    const redelivered = w.of('delivered', b.id)[1]!;
    expect(redelivered).toMatchObject({ first: false, parkedBy: 'pace', parkedMs: suspended.ms + 35 });
    expect(w.of('awaiting-slot', b.id)).toHaveLength(1);
  });

  it('a failure redelivery is not a first delivery, even on a dispatcher that never saw the message', async () => {
    const w = world();
    const e = envelope(w.clock);
    const run = w.dispatch(message(e, 2));
    await w.clock.advance(5_000);
    await run;
    expect(w.of('delivered', e.id)[0]).toMatchObject({ first: false, attempt: 2 });
  });

  it('a capacity Suspend carries the time the request was held for a slot; completion carries the upstream call', async () => {
    const w = world(() => {}, { flow: { holdMaxMs: 80 } });
    const a = envelope(w.clock);
    const b = envelope(w.clock);
    const runA = w.dispatch(message(a));
    await w.clock.advance(1);
    const runB = w.dispatch(message(b));
    await w.clock.advance(150);
    expect(await runB).toMatchObject({ kind: 'suspend' });
    const held = w.of('suspended', b.id)[0]!;
    expect(held).toMatchObject({ cause: 'capacity', heldMs: 80 });
    await w.clock.advance(5_000);
    await runA;
    const done = w.of('completed', a.id)[0]!;
    const started = w.of('started', a.id)[0]!;
    // The GPU's 20 tokens at 10 ms: the call is most of the time from start to completion.
    expect(done.upstreamMs).toBeGreaterThanOrEqual(200);
    expect(done.upstreamMs).toBeLessThanOrEqual(done.totalMs - started.queueWaitMs);
    expect(done.firstTokenMs).toBeUndefined();
  });

  it('a stream’s completion carries its time to first token, shorter than the call', async () => {
    const w = world();
    const e = envelope(w.clock, {
      mode: 'stream',
      body: { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] },
    });
    const run = w.dispatch(message(e));
    await w.clock.advance(5_000);
    expect(await run).toEqual({ kind: 'success' });
    const done = w.of('completed', e.id)[0]!;
    expect(done.firstTokenMs).toBeGreaterThan(0);
    expect(done.firstTokenMs!).toBeLessThan(done.upstreamMs!);
  });
});
