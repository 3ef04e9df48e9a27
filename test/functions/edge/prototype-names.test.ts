/**
 * Every name Object.prototype answers to, fed through every route that takes an
 * identifier from a client or an operator: each is "no such thing" (the right 4xx),
 * none reaches a prototype member, and the app stays healthy after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__', 'prototype'])];
const ADMIN = 'sk-test-admin';

let sluice: LocalSluice;
let policyBefore: string;
beforeAll(async () => {
  sluice = await startTestSluice({ adminKey: ADMIN, edge: { upstreamTimeoutMs: 2_000 } });
  policyBefore = JSON.stringify(sluice.policy());
});
afterAll(() => sluice.close());

const admin = (method: string, body?: unknown): RequestInit => ({
  method,
  headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});

async function expectError(res: Response, status: number, code?: string) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as { error: Record<string, unknown> };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  if (code) expect(body.error.code).toBe(code);
}

const path = (name: string) => encodeURIComponent(name);

describe.each(NAMES)('the name %s', (name) => {
  it('is an unknown model on every inference route, answered at once', async () => {
    const bodies: Array<[string, unknown]> = [
      ['/v1/chat/completions', { model: name, messages: [{ role: 'user', content: 'hi' }] }],
      ['/v1/completions', { model: name, prompt: 'hi' }],
      ['/v1/embeddings', { model: name, input: 'hi' }],
    ];
    for (const [route, body] of bodies)
      await expectError(await sluice.app.request(route, chat(KEYS.a1, body)), 404, 'model_not_found');
  });

  it('is an unknown API key, request id, tenant, account, model and booking', async () => {
    await expectError(
      await sluice.app.request('/v1/models', { headers: { authorization: `Bearer ${name}` } }),
      401,
      'invalid_api_key',
    );
    const key = { headers: { authorization: `Bearer ${KEYS.a1}` } };
    await expectError(await sluice.app.request(`/v1/requests/${path(name)}`, key), 404, 'request_not_found');
    for (const kind of ['tenants', 'accounts']) {
      for (const action of ['pause', 'resume']) {
        await expectError(
          await sluice.app.request(`/admin/v1/${kind}/${path(name)}/${action}`, admin('POST')),
          404,
          'not_found',
        );
      }
    }
    await expectError(
      await sluice.app.request(`/admin/v1/limits?account=${path(name)}&model=m`, admin('GET')),
      404,
      'not_found',
    );
    await expectError(
      await sluice.app.request(`/admin/v1/limits?account=a1&model=${path(name)}`, admin('GET')),
      404,
      'not_found',
    );
    const targets = [
      { level: 'tenant', tenant: name },
      { level: 'tenant', tenant: 'ta', model: name },
      { level: 'account', account: name },
      { level: 'model', model: name },
    ];
    for (const target of targets) {
      await expectError(
        await sluice.app.request('/admin/v1/limits', admin('PUT', { target, limits: { rpm: 5 } })),
        404,
        'not_found',
      );
    }
    const now = Date.now();
    for (const booking of [
      { tenant: name, startsAt: now, endsAt: now + 60_000, extra: { rpm: 1 } },
      { tenant: 'ta', model: name, startsAt: now, endsAt: now + 60_000, extra: { rpm: 1 } },
    ]) {
      const res = await sluice.app.request('/admin/v1/reservations', admin('POST', booking));
      expect([400, 409]).toContain(res.status);
      await expectError(res, res.status);
    }
    await expectError(
      await sluice.app.request(`/admin/v1/reservations/${path(name)}`, admin('DELETE')),
      404,
      'not_found',
    );
  });
});

describe('after every prototype name went through every route', () => {
  it('nothing was polluted, the policy is unchanged and the app still serves', async () => {
    const probe: Record<string, unknown> = {};
    expect(probe.paused).toBeUndefined();
    expect(probe.limits).toBeUndefined();
    expect(JSON.stringify(sluice.policy())).toBe(policyBefore);
    expect((await sluice.app.request('/healthz')).status).toBe(200);
    const ok = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(ok.status).toBe(200);
  });
});
