/**
 * The case: `npm start`, 40 batch requests queued on 8 GPU slots, then
 * Ctrl-C. The process stops within its drain time, and every client gets an answer:
 * served, or 503 `shutting_down` once the drain time is over.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { DEMO_KEYS, DEMO_MODEL } from '../../../functions/local/demo-policy.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

const DRAIN_MS = 3_000;
/** Answering clients, closing sockets and the process's own exit, past the drain time. */
const GRACE_MS = 6_000;

describe('npm start stops in bounded time', () => {
  it('40 batch requests on 8 slots, then SIGINT: exits within the drain time, every client answered', async () => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'functions/local/main.ts',
        '--port',
        '0',
        '--gpu-port',
        '0',
        '--gpu-slots',
        '8',
        '--drain-ms',
        String(DRAIN_MS),
        '--log-level',
        'warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 1_200 && !/running at (http:\/\/\S+)/.test(out); i++)
        await new Promise((r) => setTimeout(r, 50));
      const url = /running at (http:\/\/\S+)/.exec(out)![1]!;
      const answers = Array.from({ length: 40 }, (_, i) =>
        fetch(`${url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${DEMO_KEYS.batch}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: DEMO_MODEL, messages: [{ role: 'user', content: `request ${i}` }] }),
        }).then(async (r) => ({
          status: r.status,
          code: r.ok ? null : ((await r.json()) as { error: { code: string } }).error.code,
        })),
      );
      await new Promise((r) => setTimeout(r, 1_000));
      const stopAt = Date.now();
      child.kill('SIGINT');
      expect(await exited).toBe(0);
      const stoppedMs = Date.now() - stopAt;
      expect(stoppedMs).toBeLessThan(DRAIN_MS + GRACE_MS);
      expect(out).toMatch(/Stopped after \d+ ms/);

      const settled = await Promise.all(answers);
      const served = settled.filter((a) => a.status === 200).length;
      const refused = settled.filter((a) => a.status === 503 && a.code === 'shutting_down').length;
      // Served within the drain time, or answered at its end: none left hanging, none cut off.
      expect(served + refused).toBe(40);
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});

describe('LocalSluice.close', () => {
  it('serves what is queued when it fits in the drain time, then refuses new work', async () => {
    const sluice = await startTestSluice({ drainMs: 10_000 });
    const send = () => sluice.app.request('/v1/chat/completions', chat(KEYS.batch));
    const answers = Array.from({ length: 20 }, send);
    await new Promise((r) => setTimeout(r, 20));
    const closing = sluice.close();
    const late = await send();
    expect(late.status).toBe(503);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('shutting_down');
    const outcome = await closing;
    expect(outcome.drained).toBe(true);
    expect((await Promise.all(answers)).map((r) => r.status)).toEqual(Array(20).fill(200));
  });

  it('past the drain time, clients still waiting are answered 503 shutting_down', async () => {
    // A GPU slow enough that nothing finishes within the drain time.
    const sluice = await startTestSluice({
      drainMs: 300,
      gpu: { models: ['m'], slots: 4, baseTokenMs: 2_000, minOutputTokens: 4, maxOutputTokens: 4 },
    });
    const send = () => sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    const answers = Array.from({ length: 6 }, send);
    await new Promise((r) => setTimeout(r, 200));
    const startedAt = Date.now();
    const outcome = await sluice.close();
    expect(outcome.drained).toBe(false);
    expect(Date.now() - startedAt).toBeLessThan(300 + 3_000);
    for (const res of await Promise.all(answers)) {
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('shutting_down');
    }
  });
});
