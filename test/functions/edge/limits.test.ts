import { afterEach, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { defaultLimits } from '../../../lib/policy/defaults.js';
import { encodeReport, FAIR_SHARE_TTL_MS } from '../../../lib/limits/fair-share.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { fairShareKey } from '../../../lib/store/keys.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { chat, clearOfMinuteEdge, KEYS, startTestSluice } from '../../support/local-sluice.js';

let sluice: LocalSluice | undefined;
afterEach(async () => {
  await sluice?.close();
  sluice = undefined;
});

type ErrorBody = { error: { code: string; type: string; message: string } };

describe('edge: limits', () => {
  it('429 with Retry-After and a machine-readable reason once the account window is full', async () => {
    sluice = await startTestSluice({
      overrides: { defaults: { ...defaultLimits, accountModel: { ...defaultLimits.accountModel, rpm: 2 } } },
    });
    await clearOfMinuteEdge();
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
    const res = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(res.headers.get('x-sluice-reason')).toBe('account-model:requests');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    const body = (await res.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    // Another account of the same tenant is not affected by a1's own limit.
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a2))).status).toBe(200);
  });

  it('team-wide: the tenant limit stops accounts that are each under their own', async () => {
    sluice = await startTestSluice({
      overrides: { defaults: { ...defaultLimits, tenant: { ...defaultLimits.tenant, rpm: 3 } } },
    });
    await clearOfMinuteEdge();
    const statuses = [];
    for (const key of [KEYS.a1, KEYS.a2, KEYS.a1, KEYS.a2])
      statuses.push((await sluice.app.request('/v1/chat/completions', chat(key))).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    // The other tenant has its own window.
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.b1))).status).toBe(200);
  });

  it('reconciles tokens after completion: the estimate is given back down to real usage', async () => {
    sluice = await startTestSluice();
    const big = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5_000 };
    const first = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, big));
    expect(first.status).toBe(200);
    const usage = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    const remainingAfterCharge = Number(first.headers.get('x-ratelimit-remaining-tokens'));
    const second = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, { ...big, max_tokens: 1 }));
    const remainingNow = Number(second.headers.get('x-ratelimit-remaining-tokens'));
    // Without reconciliation the first request would still hold its ~5000-token estimate.
    expect(200_000 - remainingNow).toBeLessThan(usage + 100);
    expect(remainingNow).toBeGreaterThan(remainingAfterCharge + 4_000);
  });

  it('the reservoir refuses when too many requests already wait in the LiteTopic', async () => {
    sluice = await startTestSluice({
      overrides: {
        defaults: {
          ...defaultLimits,
          accountModel: { ...defaultLimits.accountModel, reservoir: 2, rate: 0.5, burst: 1 },
        },
      },
    });
    // A first request spends the bucket's only token, so the next ones wait ~2 s in the LiteTopic.
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
    const async = { prefer: 'respond-async' };
    const codes = [];
    for (let i = 0; i < 2; i++)
      codes.push((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, undefined, async))).status);
    expect(codes).toEqual([202, 202]);
    const fourth = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, undefined, async));
    expect(fourth.status).toBe(429);
    expect(fourth.headers.get('x-sluice-reason')).toBe('reservoir');
  });

  it('an over-committed tier: a LiteTopic deeper than the level the dispatchers report is refused at once, with the rounds to wait', async () => {
    const store = createEmbeddedStore(systemClock);
    sluice = await startTestSluice({
      store,
      overrides: {
        defaults: { ...defaultLimits, accountModel: { ...defaultLimits.accountModel, rate: 0.5, burst: 1 } },
      },
    });
    // What a dispatcher says when realtime's flows hold more than the model starts within 10 s:
    // two requests per LiteTopic, one round of the waiting flows every 4 s.
    const report = encodeReport({ cap: 2, rate: 0.25 });
    await store.putMember(fairShareKey('m', 'realtime'), 'a-dispatcher', report, FAIR_SHARE_TTL_MS, 8);
    const async = { prefer: 'respond-async' };
    const codes = [];
    for (let i = 0; i < 2; i++)
      codes.push((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, undefined, async))).status);
    expect(codes).toEqual([202, 202]);
    const third = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1, undefined, async));
    expect(third.status).toBe(429);
    expect(third.headers.get('x-sluice-reason')).toBe('fair-share');
    expect(third.headers.get('retry-after')).toBe('4');
    const body = (await third.json()) as ErrorBody;
    expect(body.error).toMatchObject({ code: 'rate_limit_exceeded', type: 'requests' });
    expect(body.error.message).toMatch(/starts about 15 per minute of your requests.*within 10 s/);
    // Another account's LiteTopic has its own depth.
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a2, undefined, async))).status).toBe(202);
  });

  it('a realtime account near its limit is admitted with a warning header', async () => {
    sluice = await startTestSluice({
      overrides: { defaults: { ...defaultLimits, accountModel: { ...defaultLimits.accountModel, rpm: 5 } } },
    });
    await clearOfMinuteEdge();
    const warnings = [];
    for (let i = 0; i < 5; i++)
      warnings.push((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).headers.get('x-sluice-warning'));
    expect(warnings.slice(0, 3)).toEqual([null, null, null]);
    expect(warnings[3]).toMatch(/account-model requests at 80% of 5 per minute/);
    expect(warnings[4]).toMatch(/100%/);
  });
});

describe('edge + dispatcher: failures', () => {
  it('retries a failing upstream, then answers 502 with a reason', async () => {
    sluice = await startTestSluice({ dispatcher: { maxAttempts: 2 } });
    // Backoff of the embedded engine is 1 s after the first failure.
    sluice.gpu.faults.failNext(503, 2);
    const res = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(res.status).toBe(502);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.code).toBe('upstream_failed');
    expect(body.error.message).toMatch(/503/);
  });

  it('recovers when the upstream fails once', async () => {
    sluice = await startTestSluice();
    sluice.gpu.faults.failNext(500, 1);
    expect((await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status).toBe(200);
  });

  it('answers 504 expired when a request waits longer than its tier allows', async () => {
    sluice = await startTestSluice({
      overrides: {
        // An explicit reservoir: the derived one (1/s x 300 ms) would refuse the second request up front.
        defaults: {
          ...defaultLimits,
          accountModel: { ...defaultLimits.accountModel, rate: 1, burst: 1, reservoir: 10 },
        },
        tiers: {
          realtime: { weight: 6, share: 0.6, overQuota: 'reject', maxQueueWaitMs: 300 },
          batch: { weight: 2, share: 0.25, overQuota: 'degrade', maxQueueWaitMs: 300 },
        },
      },
    });
    const [a, b] = await Promise.all([
      sluice.app.request('/v1/chat/completions', chat(KEYS.a1)),
      sluice.app.request('/v1/chat/completions', chat(KEYS.a1)),
    ]);
    // One goes at once; the other waits ~1 s for the pace, past its 300 ms allowance.
    expect([a.status, b.status].sort()).toEqual([200, 504]);
    const expired = a.status === 504 ? a : b;
    expect(((await expired.json()) as ErrorBody).error.code).toBe('queue_wait_exceeded');
  });
});
