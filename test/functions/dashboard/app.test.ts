import { describe, expect, it } from 'vitest';
import { createDashboardApp } from '../../../functions/dashboard/app.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { createPrometheusSink } from '../../../lib/telemetry/prometheus.js';
import { createTelemetry } from '../../../lib/telemetry/telemetry.js';
import { admitted, captureLogger, envelope, policyWith } from '../../lib/telemetry/helpers.js';

function setup(adminKeyHash?: string) {
  const clock = new VirtualClock(1_700_000_000_000);
  const prometheus = createPrometheusSink();
  const policy = policyWith(2);
  const telemetry = createTelemetry({ clock, log: captureLogger(), policy: () => policy, sinks: [prometheus] });
  const app = createDashboardApp({ telemetry, prometheus, adminKeyHash });
  return { app, telemetry };
}

describe('dashboard app', () => {
  it('serves one self-contained page: inline script and style, no external URL', async () => {
    const { app } = setup();
    const res = await app.request('/dashboard');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const html = await res.text();
    expect(html).toContain('"adminPath":"/admin/v1"');
    expect(html).toContain('setInterval(poll, 1000)');
    expect(html).not.toMatch(/(src|href)="https?:/);
    // The page's script parses.
    const script = /<script>([\s\S]*)<\/script>/.exec(html)![1]!;
    expect(() => new Function(script)).not.toThrow();
  });

  it('answers the live state as JSON', async () => {
    const { app, telemetry } = setup();
    telemetry.onAdmission(admitted(envelope('t1')));
    const res = await app.request('/dashboard/api/state');
    expect(res.status).toBe(200);
    const state = (await res.json()) as {
      tenants: Array<{ tenant: string }>;
      gpu: unknown[];
      history: { tiers: Record<string, unknown> };
    };
    expect(state.tenants[0]!.tenant).toBe('t1');
    expect(state.gpu).toHaveLength(1);
    expect(Object.keys(state.history.tiers)).toEqual(['realtime', 'batch', 'offline']);
  });

  it('serves Prometheus metrics at /metrics', async () => {
    const { app, telemetry } = setup();
    telemetry.onAdmission(admitted(envelope('t0')));
    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).toContain('sluice_admitted_total{tier="realtime",tenant="t0",model="m"} 1');
  });

  it('behind the admin credential: state and metrics need the admin key, the page does not', async () => {
    const { app } = setup(hashApiKey('sk-admin'));
    expect((await app.request('/dashboard')).status).toBe(200);
    expect((await app.request('/dashboard/api/state')).status).toBe(401);
    expect((await app.request('/dashboard/api/state', { headers: { authorization: 'Bearer wrong' } })).status).toBe(
      401,
    );
    expect((await app.request('/dashboard/api/state', { headers: { authorization: 'Bearer sk-admin' } })).status).toBe(
      200,
    );
    expect((await app.request('/metrics')).status).toBe(401);
    expect((await app.request('/metrics', { headers: { authorization: 'Bearer sk-admin' } })).status).toBe(200);
  });
});
