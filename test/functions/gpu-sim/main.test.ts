import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const root = fileURLToPath(new URL('../../../', import.meta.url));
let child: ChildProcess;
let url: string;

/** Starts main.ts on a free port and resolves with the URL it prints. */
function start(args: string[]): Promise<string> {
  child = spawn(`${root}node_modules/.bin/tsx`, ['functions/gpu-sim/main.ts', '--port', '0', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Keep draining stdout after the URL shows up: a closed pipe would EPIPE the child's later logs.
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += String(chunk);
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`gpu-sim exited before listening: ${out}`)));
  });
}

async function stats(): Promise<Record<string, number>> {
  return (await fetch(`${url}/stats`)).json() as Promise<Record<string, number>>;
}

beforeAll(async () => {
  url = await start(['--slots', '2', '--base-token-ms', '5', '--models', 'm1,m2']);
});

afterAll(() => {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

// Sequential: the last test stops the server.
describe.sequential('gpu-sim main (real server, wall clock)', () => {
  it('is usable from the official OpenAI client, streaming and not', async () => {
    const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
    expect((await openai.models.list()).data.map((m) => m.id)).toEqual(['m1', 'm2']);

    const messages = [{ role: 'user' as const, content: 'hello from the sdk' }];
    const whole = await openai.chat.completions.create({ model: 'm1', messages, max_tokens: 8 });
    expect(whole.usage?.completion_tokens).toBe(8);

    const stream = await openai.chat.completions.create({
      model: 'm1',
      messages,
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(usage).toEqual(whole.usage);

    const emb = await openai.embeddings.create({ model: 'm2', input: ['a', 'b'] });
    expect(emb.data).toHaveLength(2);

    await expect(openai.chat.completions.create({ model: 'nope', messages })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
    });
  });

  it('frees the slot of a client that disconnects mid-stream', async () => {
    const before = await stats();
    const client = new AbortController();
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm1',
        stream: true,
        max_tokens: 2000,
        messages: [{ role: 'user', content: 'hang up on me' }],
      }),
      signal: client.signal,
    });
    expect(res.status).toBe(200);
    await res.body!.getReader().read();
    expect((await stats()).slotsBusy).toBe(1);

    client.abort();
    let s = await stats();
    for (let i = 0; i < 40 && s.slotsBusy !== 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      s = await stats();
    }
    expect(s).toMatchObject({ slotsBusy: 0, aborted: before.aborted! + 1, served: before.served });
  });

  it('exits with status 0 on SIGINT', async () => {
    const exited = once(child, 'exit');
    child.kill('SIGINT');
    const [code] = await exited;
    expect(code).toBe(0);
  });
});
