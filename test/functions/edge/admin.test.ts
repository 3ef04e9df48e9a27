import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { chat, clearOfMinuteEdge, KEYS, startTestSluice, testPolicy } from '../../support/local-sluice.js';

const ADMIN = 'sk-test-admin';
let sluice: LocalSluice | undefined;
afterEach(async () => {
  await sluice?.close();
  sluice = undefined;
});

const admin = (method: string, body?: unknown, key = ADMIN): RequestInit => ({
  method,
  headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
  body: body ? JSON.stringify(body) : undefined,
});

describe('admin API', () => {
  it('needs the admin key: a tenant key is refused', async () => {
    sluice = await startTestSluice({ adminKey: ADMIN });
    expect((await sluice.app.request('/admin/v1/policy', admin('GET', undefined, KEYS.a1))).status).toBe(401);
    expect((await sluice.app.request('/admin/v1/policy', { method: 'GET' })).status).toBe(401);
    expect((await sluice.app.request('/admin/v1/policy', admin('GET'))).status).toBe(200);
  });

  it('is absent without an admin key', async () => {
    sluice = await startTestSluice();
    expect((await sluice.app.request('/admin/v1/policy', admin('GET'))).status).toBe(404);
  });

  it('pause refuses the tenant’s new requests and holds its queued work; resume releases it', async () => {
    sluice = await startTestSluice({ adminKey: ADMIN, dispatcher: { pausedRecheckMs: 100 } });
    expect((await sluice.app.request('/admin/v1/tenants/ta/pause', admin('POST'))).status).toBe(200);
    const refused = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-sluice-reason')).toBe('tenant-paused');
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/paused/);
    // Another tenant is untouched.
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.b1))).status).toBe(200);

    // Work queued before a pause waits rather than fails.
    await sluice.app.request('/admin/v1/tenants/ta/resume', admin('POST'));
    await sluice.app.request(
      '/admin/v1/limits',
      admin('PUT', { target: { level: 'tenant', tenant: 'ta' }, limits: { rate: 0.5, burst: 1 } }),
    );
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200); // spends the burst
    const queued = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, undefined, { prefer: 'respond-async' }),
    );
    const { id } = (await queued.json()) as { id: string };
    await sluice.app.request('/admin/v1/accounts/a1/pause', admin('POST'));
    await new Promise((r) => setTimeout(r, 2_500));
    const status = async () =>
      (
        (await (
          await sluice!.app.request(`/v1/requests/${id}`, { headers: { authorization: `Bearer ${KEYS.a2}` } })
        ).json()) as { status: string }
      ).status;
    expect(await status()).toBe('queued');
    await sluice.app.request('/admin/v1/accounts/a1/resume', admin('POST'));
    const until = Date.now() + 5_000;
    while ((await status()) !== 'completed' && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(await status()).toBe('completed');
  });

  it('sets limits that apply to the next request, and reads the resolved ones', async () => {
    sluice = await startTestSluice({ adminKey: ADMIN });
    const put = await sluice.app.request(
      '/admin/v1/limits',
      admin('PUT', { target: { level: 'account', account: 'a1' }, limits: { rpm: 1 } }),
    );
    expect(put.status).toBe(200);
    const got = (await (await sluice.app.request('/admin/v1/limits?account=a1&model=m', admin('GET'))).json()) as {
      accountModel: { rpm: number };
    };
    expect(got.accountModel.rpm).toBe(1);
    await clearOfMinuteEdge();
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(429);
    const bad = await sluice.app.request(
      '/admin/v1/limits',
      admin('PUT', { target: { level: 'account', account: 'a1' }, limits: { rpm: -3 } }),
    );
    expect(bad.status).toBe(400);
    const unknown = await sluice.app.request(
      '/admin/v1/limits',
      admin('PUT', { target: { level: 'tenant', tenant: 'ghost' }, limits: { rpm: 3 } }),
    );
    expect(unknown.status).toBe(404);
  });

  it('books, lists and cancels bursts; refuses one that does not fit, with the reason', async () => {
    sluice = await startTestSluice({
      adminKey: ADMIN,
      policy: (url) => {
        const p = testPolicy(url);
        p.models.m!.tokensPerSecond = 100; // 3,000 bookable tokens per minute
        return p;
      },
    });
    const now = Date.now();
    const booking = {
      tenant: 'ta',
      model: 'm',
      startsAt: now + 60_000,
      endsAt: now + 120_000,
      extra: { rpm: 10, tpm: 2_000 },
    };
    const created = await sluice.app.request('/admin/v1/reservations', admin('POST', booking));
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const refused = await sluice.app.request('/admin/v1/reservations', admin('POST', booking));
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /can take 3000 booked tokens per minute/,
    );
    const list = (await (await sluice.app.request('/admin/v1/reservations', admin('GET'))).json()) as {
      data: Array<{ id: string }>;
    };
    expect(list.data.map((r) => r.id)).toEqual([id]);
    expect((await sluice.app.request(`/admin/v1/reservations/${id}`, admin('DELETE'))).status).toBe(200);
    expect((await sluice.app.request(`/admin/v1/reservations/${id}`, admin('DELETE'))).status).toBe(404);
  });
});

describe('pause keeps its promise', () => {
  it('time spent paused does not count toward the tier’s maximum wait', async () => {
    const MAX_WAIT_MS = 1_500;
    sluice = await startTestSluice({
      adminKey: ADMIN,
      dispatcher: { pausedRecheckMs: 100 },
      policy: (url) => {
        const base = testPolicy(url);
        return testPolicy(url, {
          tiers: { ...base.tiers, realtime: { ...base.tiers.realtime!, maxQueueWaitMs: MAX_WAIT_MS } },
        });
      },
    });
    // A pace of 2 per second with no burst: the second request waits about half a second for its release.
    await sluice.app.request(
      '/admin/v1/limits',
      admin('PUT', { target: { level: 'tenant', tenant: 'ta' }, limits: { rate: 2, burst: 1 } }),
    );
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
    const queued = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, undefined, { prefer: 'respond-async' }),
    );
    const { id } = (await queued.json()) as { id: string };
    expect((await sluice.app.request('/admin/v1/accounts/a1/pause', admin('POST'))).status).toBe(200);
    // Paused for longer than the tier's whole maximum wait.
    await new Promise((r) => setTimeout(r, 2 * MAX_WAIT_MS));
    await sluice.app.request('/admin/v1/accounts/a1/resume', admin('POST'));
    const read = async () =>
      (await (
        await sluice!.app.request(`/v1/requests/${id}`, { headers: { authorization: `Bearer ${KEYS.a2}` } })
      ).json()) as { status: string; http_status?: number };
    const until = Date.now() + 5_000;
    let status = await read();
    while (status.status === 'queued' && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 50));
      status = await read();
    }
    expect(status).toMatchObject({ status: 'completed', http_status: 200 });
  });
});
