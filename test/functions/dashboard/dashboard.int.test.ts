/**
 * The dashboard in a real browser: Debian's chromium (installed by
 * test/setup/chromium.setup.ts) driven by playwright-core, against a real local
 * Sluice on a free port. Background traffic from a few tenants, then a burst from
 * one: the page must show the bursting tenant at the top within five seconds, and
 * its pause button must make that tenant's requests refused (and resume undo it).
 *
 * Screenshots go to test/artifacts/ (gitignored). With SLUICE_DOCS_SCREENSHOT=1 the
 * one taken during the burst is also written to docs/dashboard.png for the README.
 */
import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startLocalSluice, type LocalSluice } from '../../../functions/local/sluice.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { defaultLimits, defaultTiers } from '../../../lib/policy/defaults.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { clearOfMinuteEdge } from '../../support/local-sluice.js';

const ADMIN_KEY = 'sk-test-admin-dashboard';
const ARTIFACTS = new URL('../../artifacts/', import.meta.url);
const DOCS_SHOT = new URL('../../../docs/dashboard.png', import.meta.url);

const accounts = {
  'acme-chat': { tenant: 'acme', tier: 'realtime', key: 'sk-acme-chat', limits: { rpm: 110 } },
  'initech-bot': { tenant: 'initech', tier: 'realtime', key: 'sk-initech-bot' },
  'globex-etl': { tenant: 'globex', tier: 'batch', key: 'sk-globex-etl' },
  'umbrella-batch-7': {
    tenant: 'umbrella',
    tier: 'batch',
    key: 'sk-umbrella-batch-7',
    limits: { rpm: 80, rate: 10, burst: 20 },
  },
} as const;

function policy(gpuBaseUrl: string) {
  return parsePolicy({
    tiers: defaultTiers,
    defaults: defaultLimits,
    models: { m: { slots: 8, upstreams: [gpuBaseUrl], defaultMaxTokens: 12 } },
    tenants: { acme: {}, initech: {}, globex: {}, umbrella: {} },
    accounts: Object.fromEntries(
      Object.entries(accounts).map(([id, a]) => [
        id,
        {
          tenant: a.tenant,
          tier: a.tier,
          keyHashes: [hashApiKey(a.key)],
          ...('limits' in a ? { limits: a.limits } : {}),
        },
      ]),
    ),
  });
}

function send(sluice: LocalSluice, key: string, async = true): Promise<Response> {
  return fetch(`${sluice.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...(async ? { prefer: 'respond-async' } : {}),
    },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('dashboard in a real browser', () => {
  let sluice: LocalSluice;
  let browser: Browser;
  let page: Page;
  const timers: NodeJS.Timeout[] = [];
  const pending: Promise<unknown>[] = [];
  const fire = (key: string, async = true) =>
    pending.push(
      send(sluice, key, async)
        .then((r) => r.arrayBuffer())
        .catch(() => undefined),
    );

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sluice = await startLocalSluice({
      clock: systemClock,
      log: silentLogger,
      port: 0,
      adminKey: ADMIN_KEY,
      // Work the test leaves queued need not be served on close.
      drainMs: 2_000,
      gpu: { models: ['m'], slots: 8, baseTokenMs: 5, prefillMsPerKToken: 1, minOutputTokens: 4, maxOutputTokens: 12 },
      policy,
    });
    browser = await chromium.launch({
      executablePath: inject('chromiumPath'),
      headless: true,
      args: ['--disable-background-networking', '--no-sandbox', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1440, height: 1000 } });
  });

  afterAll(async () => {
    for (const t of timers) clearInterval(t);
    await browser?.close();
    await Promise.allSettled(pending);
    await sluice?.close();
  });

  it('renders, shows a burst at the top within five seconds, and pauses and resumes a tenant', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${sluice.url}/dashboard#key=${ADMIN_KEY}`);
    await expect.poll(() => page.textContent('#status-text'), { timeout: 5_000 }).toMatch(/^live/);
    // The key left the address bar for sessionStorage.
    expect(page.url()).not.toContain(ADMIN_KEY);
    expect(await page.locator('#history .tier').count()).toBe(3);
    expect(await page.locator('#gpu .bar-row').count()).toBe(3);

    // A burst booked ahead for globex, through the admin API.
    const now = Date.now();
    const booking = await fetch(`${sluice.url}/admin/v1/reservations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
      body: JSON.stringify({
        tenant: 'globex',
        model: 'm',
        startsAt: now + 10 * 60_000,
        endsAt: now + 70 * 60_000,
        extra: { rpm: 3_000 },
        note: 'quarter-end batch',
      }),
    });
    expect(booking.status).toBe(201);

    // Steady background traffic from three tenants.
    timers.push(setInterval(() => fire(accounts['initech-bot'].key, false), 400));
    timers.push(setInterval(() => fire(accounts['globex-etl'].key), 300));
    timers.push(setInterval(() => fire(accounts['acme-chat'].key, false), 500));
    await sleep(3_000);
    // Limits are per clock-aligned minute: keep both bursts inside one.
    await clearOfMinuteEdge(6_000);
    // acme's realtime account runs close to its limit: warnings and an alert.
    for (let i = 0; i < 100; i++) fire(accounts['acme-chat'].key);
    await sleep(1_500);

    // The burst: 300 requests at once from one batch account of umbrella. Batch degrades:
    // 80 per minute is its soft quota (past it, it is paced slower), 3 x 80 the hard cap.
    const burstStart = Date.now();
    const burst = Array.from({ length: 300 }, () => send(sluice, accounts['umbrella-batch-7'].key));
    pending.push(...burst);
    await page.waitForFunction(
      () => document.querySelector('#tenants tbody tr')?.getAttribute('data-tenant') === 'umbrella',
      null,
      { timeout: 5_000, polling: 100 },
    );
    const shownAfterMs = Date.now() - burstStart;
    expect(shownAfterMs).toBeLessThan(5_000);
    const statuses = await Promise.all(burst.map((p) => p.then((r) => r.status)));
    expect(statuses.filter((s) => s === 202).length).toBe(240);
    expect(statuses.filter((s) => s === 429).length).toBe(60);

    // Let the queue and the charts show the burst being absorbed, then take the picture.
    await expect
      .poll(() => page.locator('#topics [data-lite-topic]').first().getAttribute('data-lite-topic'), { timeout: 5_000 })
      .toContain('umbrella');
    await sleep(3_000);
    const row = page.locator('#tenants tbody tr[data-tenant="umbrella"]');
    expect(Number(await row.locator('td').nth(3).textContent())).toBe(60);
    expect(await page.locator('#accounts tbody tr').first().locator('td').first().textContent()).toContain(
      'umbrella-batch-7',
    );
    expect(await page.locator('#warnings li').count()).toBeGreaterThan(0);
    expect(await page.textContent('#bookings')).toContain('globex');
    expect(await page.locator('#alerts [data-alert="realtime-near-limit"]').count()).toBe(1);
    const shot = await page.screenshot({ path: new URL('dashboard-burst.png', ARTIFACTS).pathname, fullPage: true });
    if (process.env.SLUICE_DOCS_SCREENSHOT === '1') {
      mkdirSync(new URL('.', DOCS_SHOT), { recursive: true });
      await page.screenshot({ path: DOCS_SHOT.pathname, fullPage: true });
    }
    expect(shot.byteLength).toBeGreaterThan(10_000);

    // Pause umbrella from its row: the admin API applies it, its requests are then refused.
    await row.locator('button[data-action="pause"]').click();
    await page.waitForSelector('#paused [data-paused-tenant="umbrella"]', { timeout: 5_000 });
    await expect.poll(() => row.locator('.pill').textContent(), { timeout: 3_000 }).toBe('paused');
    const refused = await send(sluice, accounts['umbrella-batch-7'].key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-sluice-reason')).toBe('tenant-paused');
    // Other tenants are untouched.
    expect((await send(sluice, accounts['globex-etl'].key)).status).toBe(202);
    await page.screenshot({ path: new URL('dashboard-paused.png', ARTIFACTS).pathname, fullPage: true });

    // Resume from the paused list.
    await page.locator('#paused [data-paused-tenant="umbrella"] button[data-action="resume"]').click();
    await page.waitForSelector('#paused [data-paused-tenant="umbrella"]', { state: 'detached', timeout: 5_000 });
    // (umbrella's account is still past its hard cap for this minute: refused, but no longer for the pause.)
    await expect
      .poll(async () => (await send(sluice, accounts['umbrella-batch-7'].key)).headers.get('x-sluice-reason'), {
        timeout: 5_000,
      })
      .not.toBe('tenant-paused');

    // One account alone can be paused too, from the accounts table.
    await page.locator('#accounts tbody tr[data-account="globex-etl"] button[data-action="pause"]').click();
    await page.waitForSelector('#paused [data-paused-account="globex-etl"]', { timeout: 5_000 });
    const accountRefused = await send(sluice, accounts['globex-etl'].key);
    expect([accountRefused.status, accountRefused.headers.get('x-sluice-reason')]).toEqual([429, 'account-paused']);
    await page.locator('#paused [data-paused-account="globex-etl"] button[data-action="resume"]').click();
    await page.waitForSelector('#paused [data-paused-account="globex-etl"]', { state: 'detached', timeout: 5_000 });
    expect((await send(sluice, accounts['globex-etl'].key)).status).toBe(202);

    // The same story in Prometheus.
    const metrics = await (await fetch(`${sluice.url}/metrics`)).text();
    expect(metrics).toMatch(
      /sluice_refused_total\{tier="batch",tenant="umbrella",model="m",reason="account-model:requests"\} 6[01]\n/,
    );
    expect(metrics).toMatch(
      /sluice_refused_total\{tier="batch",tenant="umbrella",model="m",reason="tenant-paused"\} 1/,
    );
    expect(errors).toEqual([]);
  });
});
