import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createDispatcher } from '../../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../../lib/dispatch-events.js';
import { encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { createEmbeddedResults } from '../../../lib/results/embedded.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { reservoirKey } from '../../../lib/store/keys.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createInProcessUpstream } from '../../../lib/upstream/in-process.js';
import { basePolicy } from '../policy/fixtures.js';

// Upstream 400/404/422 are about the request, not about Sluice or the GPU: the client
// gets them as they are, once, and nothing is retried, dead-lettered or alerted.
describe('dispatcher: client errors from the upstream', () => {
  const clock = new VirtualClock(1_000_000);
  const raw = basePolicy();
  raw.models.m!.upstreams = ['http://gpu/v1'];
  const policy = parsePolicy(raw);
  const gpu = createGpuSim({ clock, models: ['m'], slots: 2, baseTokenMs: 10, minOutputTokens: 5, maxOutputTokens: 5 });
  const results = createEmbeddedResults({ clock });
  const events: DispatchEvent[] = [];
  const dead: string[] = [];
  let n = 0;
  const dispatch = createDispatcher({
    clock,
    store: createEmbeddedStore(clock),
    results,
    upstream: createInProcessUpstream({ fetch: gpu.app.fetch, clock }),
    policy: () => policy,
    log: silentLogger,
    newId: () => `lease-${n++}`,
    onEvent: (e) => events.push(e),
    deadLetters: { put: async (_e, reason) => void dead.push(reason) },
  });
  const envelope = (mode: Envelope['mode']): Envelope => ({
    id: `req_${n++}`,
    account: 'rt',
    tenant: 'acme',
    tier: 'realtime',
    model: 'm',
    liteTopic: 'realtime-acme-m',
    operation: 'chat.completions',
    body: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
    mode,
    enqueuedAt: clock.now(),
    deadline: clock.now() + 10_000,
    tokenEstimate: 100,
    charged: [],
    reservoirKey: reservoirKey('acme', 'realtime-acme-m'),
    paceFactor: 1,
  });

  for (const status of [400, 404, 422] as const) {
    for (const mode of ['sync', 'stream'] as const) {
      it(`${status} (${mode}) is answered as the upstream answered it, on the first attempt`, async () => {
        events.length = 0;
        dead.length = 0;
        gpu.faults.failNext(status);
        const e = envelope(mode);
        const run = dispatch({ messageId: e.id, liteTopic: e.liteTopic, body: encodeEnvelope(e), attempt: 1 });
        await clock.advance(1_000);
        expect(await run).toEqual({ kind: 'success' });
        const result = await results.get(e.id);
        expect(result).toMatchObject({ status: 'failed', httpStatus: status });
        expect((result as { body: { error: { code: string } } }).body.error.code).toBe('injected_fault');
        expect(dead).toEqual([]);
        expect(events.map((x) => x.type)).not.toContain('failed');
        expect(events.map((x) => x.type)).not.toContain('retrying');
      });
    }
  }

  it('a 5xx is still retried: the line between the two is the status', async () => {
    events.length = 0;
    gpu.faults.failNext(500);
    const e = envelope('sync');
    expect(
      await dispatch({ messageId: e.id, liteTopic: e.liteTopic, body: encodeEnvelope(e), attempt: 1 }),
    ).toMatchObject({ kind: 'failure' });
    expect(events.map((x) => x.type)).toContain('retrying');
  });
});
