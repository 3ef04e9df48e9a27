import { describe, it, expect, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let child: ChildProcess | undefined;

afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
});

/** Starts main.ts on a free port and resolves with the URL it prints. */
async function start(args: string[]): Promise<string> {
  child = spawn(`${root}node_modules/.bin/tsx`, ['functions/gpu-sim/main.ts', '--port', '0', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Keep draining stdout after the URL shows up: a closed pipe would EPIPE the child's later logs.
  let out = '';
  return new Promise((resolve, reject) => {
    child!.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child!.once('exit', () => reject(new Error(`gpu-sim exited before listening: ${out}`)));
  });
}

async function stats(url: string): Promise<Record<string, number>> {
  return (await fetch(`${url}/stats`)).json() as Promise<Record<string, number>>;
}

describe('gpu-sim main (real server, wall clock)', () => {
  it('serves over HTTP, frees the slot of a client that disconnects, and exits cleanly on SIGINT', async () => {
    const url = await start(['--slots', '2', '--base-token-ms', '30', '--models', 'm1,m2']);

    const models = (await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['m1', 'm2']);

    const client = new AbortController();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm1', stream: true, messages: [{ role: 'user', content: 'hang up on me' }] }),
      signal: client.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    expect((await stats(url)).slotsBusy).toBe(1);

    client.abort();
    let s = await stats(url);
    for (let i = 0; i < 40 && s.slotsBusy !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      s = await stats(url);
    }
    expect(s).toMatchObject({ slotsBusy: 0, aborted: 1, served: 0 });

    const exited = once(child!, 'exit');
    child!.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
