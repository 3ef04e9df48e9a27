import { spawn } from 'node:child_process';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { KEYS, startTestSluice } from '../../support/local-sluice.js';

describe('end to end with the official openai client', () => {
  let sluice: LocalSluice;
  let client: OpenAI;
  beforeAll(async () => {
    sluice = await startTestSluice();
    client = new OpenAI({ apiKey: KEYS.a1, baseURL: `${sluice.url}/v1`, maxRetries: 0 });
  });
  afterAll(() => sluice.close());

  it('sync chat completion', async () => {
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]?.message.content?.length).toBeGreaterThan(0);
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('streaming chat completion gives the same text as sync', async () => {
    const messages = [{ role: 'user' as const, content: 'Same words twice' }];
    const whole = await client.chat.completions.create({ model: 'm', messages });
    const stream = await client.chat.completions.create({ model: 'm', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(whole.choices[0]?.message.content);
  });

  it('errors surface as the client library’s typed errors', async () => {
    await expect(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: `${sluice.url}/v1`, maxRetries: 0 });
    await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('concurrent clients of two tenants all get answers', async () => {
    const other = new OpenAI({ apiKey: KEYS.b1, baseURL: `${sluice.url}/v1`, maxRetries: 0 });
    const calls = Array.from({ length: 30 }, (_, i) =>
      (i % 2 ? client : other).chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: `n${i}` }],
        max_tokens: 8,
      }),
    );
    const done = await Promise.all(calls);
    expect(done.every((c) => c.object === 'chat.completion')).toBe(true);
  });
});

describe('npm start', () => {
  it('prints a curl that answers 200, and drains on Ctrl-C', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'functions/local/main.ts', '--port', '0', '--gpu-port', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 200 && !out.includes('Ctrl-C'); i++) await new Promise((r) => setTimeout(r, 50));
      const curl = out.split('\n').find((l) => l.trim().startsWith('curl '));
      expect(curl).toBeDefined();
      // Run the printed line's request exactly: URL, headers and body.
      const url = /curl -s (\S+)/.exec(curl!)![1]!;
      const headers = Object.fromEntries([...curl!.matchAll(/-H '([^:]+): ([^']+)'/g)].map((m) => [m[1]!, m[2]!]));
      const body = /-d '([^']+)'/.exec(curl!)![1]!;
      const res = await fetch(url, { method: 'POST', headers, body });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out).toMatch(/Stopped after \d+ ms \(everything served\)/);
  }, 30_000);
});
