import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { traceCommand } from '../../../functions/cli/trace.js';
import { errorResponse, ApiError } from '../../../functions/edge/errors.js';
import { traceRoutes } from '../../../functions/edge/routes/traces.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { createAggregateSink } from '../../../lib/telemetry/aggregate/sink.js';

const KEY = 'sk-admin-traces-test';

async function setup() {
  const clock = new VirtualClock(1_000);
  const store = createEmbeddedStore(clock);
  const sink = createAggregateSink({ store, clock, instance: 'edge-1', role: 'edge' });
  sink.onAdmission({
    outcome: 'admitted',
    id: 'r1',
    tenant: 't',
    account: 'a',
    tier: 'batch',
    model: 'm',
    liteTopic: 'batch-t-m',
  });
  const envelope = { id: 'r1', tier: 'batch', tenant: 't', model: 'm', liteTopic: 'batch-t-m' };
  sink.onDispatch({ type: 'suspended', envelope, ms: 100, cause: 'capacity' });
  sink.onDispatch({ type: 'started', envelope, queueWaitMs: 100 });
  sink.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 150 });
  await sink.flush();
  const app = new Hono();
  app.route('/admin/v1', traceRoutes(hashApiKey(KEY), store, clock));
  app.onError((e, c) => (e instanceof ApiError ? errorResponse(c, e) : c.json({ error: String(e) }, 500)));
  return app;
}

describe('GET /admin/v1/requests/:id/trace', () => {
  it('needs the admin key, answers 404 for unknown or oversized ids, and lists the steps', async () => {
    const app = await setup();
    const get = (id: string, key = KEY) =>
      app.request(`/admin/v1/requests/${id}/trace`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get('r1', 'sk-wrong-key-000000')).status).toBe(401);
    expect((await app.request('/admin/v1/requests/r1/trace')).status).toBe(401);
    const missing = await get('nope');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
    expect((await get('x'.repeat(4_000))).status).toBe(404);
    const ok = await get('r1');
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { steps: { step: string }[] };
    expect(body.steps.map((s) => s.step)).toEqual(['admitted', 'suspended', 'started', 'completed']);
  });

  it('sluice trace prints the timeline, one line per step', async () => {
    const app = await setup();
    const lines: string[] = [];
    const io = {
      out: (l: string) => lines.push(l),
      err: (l: string) => lines.push(l),
      env: {},
      fetch: ((url: string, init?: RequestInit) => app.request(new URL(url).pathname, init)) as typeof fetch,
    };
    expect(await traceCommand('r1', { url: 'http://edge', 'admin-key': KEY }, io)).toBe(0);
    expect(lines).toHaveLength(5);
    expect(lines[2]).toMatch(/suspended .*Suspend 100 ms \(waiting for a GPU slot\)/);
    expect(lines[4]).toMatch(/completed .*answered 200 after 150 ms/);
    expect(await traceCommand('nope', { url: 'http://edge', 'admin-key': KEY }, io)).toBe(1);
    expect(await traceCommand('r1', {}, io)).toBe(2);
  });
});
