/**
 * Issue #16's "Done when": two edge processes and two dispatcher processes on one
 * real redis-server and one RocketMQ, sharing a policy file. A tenant bursts
 * through edge A; the dashboard served by edge B (a real browser) shows it on top
 * within five seconds; pausing it through edge B stops it at both edges; the trace
 * of a delayed request lists its Suspends and its slot wait.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCli } from '../../../functions/cli/sluice.js';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { defaultLimits, defaultTiers } from '../../../lib/policy/defaults.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';

const ADMIN_KEY = 'sk-test-admin-one-view';
const BURSTY = 'sk-bursty-app';
const QUIET = 'sk-quiet-app';
/** Paced slower than the dispatcher holds a message itself: its queued requests are Suspended. */
const SLOW = 'sk-slow-app';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc {
  readonly child: ChildProcess;
  url?: string;
  readonly output: string[];
}

function start(entry: string, env: Record<string, string>, waitForUrl: boolean): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, SLUICE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const proc: Proc = { child, output: [] };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => (waitForUrl ? reject(new Error(`${entry} did not start:\n${proc.output.join('')}`)) : resolve(proc)),
      waitForUrl ? 60_000 : 8_000,
    );
    const onData = (chunk: Buffer) => {
      const text = chunk.toString();
      proc.output.push(text);
      const m = /listening (http:\/\/\S+)/.exec(text);
      if (m) {
        proc.url = m[1];
        clearTimeout(timer);
        resolve(proc);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => proc.output.push(c.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (waitForUrl && !proc.url) reject(new Error(`${entry} exited ${code}:\n${proc.output.join('')}`));
    });
  });
}

function send(edge: Proc, key: string): Promise<Response> {
  return fetch(`${edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, prefer: 'respond-async' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 }),
  });
}

describe('one view of the whole deployment', () => {
  const procs: Proc[] = [];
  let gpuServer: ServerType;
  let browser: Browser;
  let dir: string;
  let edgeA: Proc;
  let edgeB: Proc;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-one-view-'));
    const gpu = createGpuSim({
      models: ['m'],
      slots: 2,
      clock: systemClock,
      baseTokenMs: 100,
      prefillMsPerKToken: 1,
      minOutputTokens: 6,
      maxOutputTokens: 8,
    });
    const gpuUrl = await new Promise<string>((resolve) => {
      gpuServer = serve({ fetch: gpu.app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) =>
        resolve(`http://127.0.0.1:${info.port}/v1`),
      );
    });
    const policyFile = join(dir, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({
        tiers: defaultTiers,
        defaults: defaultLimits,
        // Two slots for the model: a burst has to wait for them (the slot wait the trace shows).
        models: { m: { slots: 2, upstreams: [gpuUrl], defaultMaxTokens: 8 } },
        tenants: { bursty: {}, quiet: {} },
        accounts: {
          'bursty-app': {
            tenant: 'bursty',
            tier: 'batch',
            keyHashes: [hashApiKey(BURSTY)],
            limits: { rpm: 1000, rate: 4, burst: 5 },
          },
          'quiet-app': { tenant: 'quiet', tier: 'batch', keyHashes: [hashApiKey(QUIET)] },
          'slow-app': {
            tenant: 'quiet',
            tier: 'batch',
            keyHashes: [hashApiKey(SLOW)],
            limits: { rpm: 1000, rate: 0.5, burst: 1 },
          },
        },
      }),
    );
    const mq = inject('rocketmq');
    const common = {
      SLUICE_REDIS_URL: inject('redisUrl'),
      SLUICE_POLICY_FILE: policyFile,
      SLUICE_ROCKETMQ_ENDPOINTS: mq.endpoints,
      SLUICE_ROCKETMQ_TOPIC: mq.parentTopic,
      SLUICE_ROCKETMQ_GROUP: mq.consumerGroup,
    };
    const edge = { ...common, SLUICE_ADMIN_KEY: ADMIN_KEY, SLUICE_EDGE_PORT: '0' };
    [edgeA, edgeB] = await Promise.all([
      start('functions/edge/main.ts', edge, true),
      start('functions/edge/main.ts', edge, true),
    ]);
    procs.push(edgeA, edgeB);
    for (let i = 0; i < 2; i++)
      procs.push(
        await start(
          'functions/dispatcher/main.ts',
          { ...common, SLUICE_METRICS_PORT: '0', SLUICE_DISPATCH_CONCURRENCY: '16' },
          false,
        ),
      );
    browser = await chromium.launch({
      executablePath: inject('chromiumPath'),
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  });

  afterAll(async () => {
    await browser?.close();
    for (const p of procs) p.child.kill('SIGTERM');
    await sleep(500);
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    gpuServer?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows a burst through edge A on edge B, pauses it at both edges, and traces a delayed request', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${edgeB.url}/dashboard#key=${ADMIN_KEY}`);
    await expect.poll(() => page.textContent('#status-text'), { timeout: 10_000 }).toMatch(/^live/);
    // Every instance is in the view, each with when it last read its policy.
    await expect.poll(() => page.locator('#instances [data-instance]').count(), { timeout: 10_000 }).toBe(4);

    for (let i = 0; i < 3; i++) await send(edgeB, QUIET).then((r) => r.arrayBuffer());
    const burstStart = Date.now();
    const burst = Array.from({ length: 60 }, () =>
      send(edgeA, BURSTY).then(async (r) => ({ status: r.status, body: (await r.json()) as { id?: string } })),
    );
    await page.waitForFunction(
      () => document.querySelector('#tenants tbody tr')?.getAttribute('data-tenant') === 'bursty',
      null,
      { timeout: 5_000, polling: 100 },
    );
    const shownAfterMs = Date.now() - burstStart;
    console.log(`[one-view] burst through edge A on top of edge B's dashboard after ${shownAfterMs} ms`);
    expect(shownAfterMs).toBeLessThan(5_000);
    // Meanwhile a slowly paced account sends three: paced by Suspends, then waiting behind the burst for a slot.
    const slow = await Promise.all(
      Array.from({ length: 3 }, () => send(edgeA, SLOW).then(async (r) => ((await r.json()) as { id?: string }).id)),
    );
    const answers = await Promise.all(burst);
    const ids = answers.filter((a) => a.status === 202).map((a) => a.body.id!);
    // The batch reservoir may refuse the tail of the burst; most of it waits.
    expect(ids.length).toBeGreaterThan(40);

    // The trace of a delayed request: the slow account's pace gaps (longer than the dispatcher
    // holds a message itself) are Suspends, and the burst keeps the two slots busy (slot wait).
    const traceOf = async (id: string) => {
      const r = await fetch(`${edgeB.url}/admin/v1/requests/${id}/trace`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      type Step = {
        step: string;
        cause?: string;
        queueWaitMs?: number;
        slotWaitMs?: number;
        status?: number;
        by: string;
      };
      return r.status === 200 ? ((await r.json()) as { steps: Step[] }).steps : [];
    };
    const last = ids[ids.length - 1]!;
    await expect
      .poll(async () => (await traceOf(last)).map((s) => s.step).at(-1), { timeout: 60_000, interval: 500 })
      .toBe('completed');
    for (const id of slow)
      await expect
        .poll(async () => (await traceOf(id!)).map((s) => s.step).at(-1), { timeout: 60_000, interval: 500 })
        .toBe('completed');
    const traced = [...ids, ...slow.map((id) => id!)];
    const traces = await Promise.all(traced.map(traceOf));
    // Paced by Suspends, then held un-acked in flow control until a slot came free.
    const delayed = traces.find(
      (t) => t.some((s) => s.step === 'suspended') && t.some((s) => s.step === 'started' && (s.slotWaitMs ?? 0) > 0),
    );
    const withSuspend = traces.filter((t) => t.some((s) => s.step === 'suspended')).length;
    const withSlotWait = traces.filter((t) => t.some((s) => s.step === 'started' && (s.slotWaitMs ?? 0) > 0)).length;
    console.log(
      `[one-view] of ${traces.length} traces: ${withSuspend} with a Suspend, ${withSlotWait} with a slot wait`,
    );
    expect(delayed, 'a request that was suspended and waited for a GPU slot').toBeDefined();
    console.log(`[one-view] trace of a delayed request: ${JSON.stringify(delayed)}`);
    expect(delayed![0]!.step).toBe('admitted');
    const started = delayed!.find((s) => s.step === 'started')!;
    expect(started.queueWaitMs).toBeGreaterThan(0);
    expect(delayed!.at(-1)).toMatchObject({ step: 'completed', status: 200 });
    // Steps come from an edge and a dispatcher process.
    expect(new Set(delayed!.map((s) => s.by.split('-')[0])).size).toBe(2);
    // The same timeline through `sluice trace`, asked of the other edge.
    const lines: string[] = [];
    const delayedId = traced[traces.indexOf(delayed!)]!;
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l), now: () => Date.now(), env: {} };
    expect(await runCli(['trace', delayedId, '--url', edgeA.url!, '--admin-key', ADMIN_KEY], io)).toBe(0);
    console.log(`[one-view] sluice trace ${delayedId}\n${lines.join('\n')}`);
    expect(lines.join('\n')).toMatch(/suspended .*Suspend \d+ ms/);
    expect(lines.join('\n')).toMatch(/started .*[1-9]\d* ms of it waiting for a GPU slot/);
    expect(lines.join('\n')).toMatch(/completed .*answered 200/);

    // Pause through edge B's admin API: both edges refuse the tenant within the refresh.
    const pause = await fetch(`${edgeB.url}/admin/v1/tenants/bursty/pause`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(pause.status).toBe(200);
    const pausedAt = Date.now();
    for (const edge of [edgeA, edgeB]) {
      await expect
        .poll(async () => (await send(edge, BURSTY)).headers.get('x-sluice-reason'), { timeout: 5_000, interval: 100 })
        .toBe('tenant-paused');
    }
    console.log(`[one-view] pause through edge B in force at both edges after ${Date.now() - pausedAt} ms`);
    expect((await send(edgeA, QUIET)).status).toBe(202);
    await page.screenshot({ path: join(dir, 'one-view.png') });
  }, 300_000);
});
