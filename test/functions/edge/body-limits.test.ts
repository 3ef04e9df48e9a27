/**
 * Body depth and size are checked before anything is charged: a hostile body gets
 * an OpenAI-shaped 400 (or 413) naming the limit, never a 5xx, and costs nothing.
 * URLs handed back come from configuration, never from the Host header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

const nested = (depth: number, leaf: unknown = 'x'): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = [v];
  return v;
};
/** Built as text: JSON.stringify itself would overflow on the deepest ones. */
const deepText = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({ edge: { maxBodyDepth: 16 } });
});
afterAll(() => sluice.close());

const remaining = (res: Response) => Number(res.headers.get('x-ratelimit-remaining-requests'));

describe('body depth', () => {
  it.each([
    ['messages[].content', (d: string) => `{"model":"m","messages":[{"role":"user","content":${d}}]}`, 10_000],
    [
      'a pass-through field',
      (d: string) => `{"model":"m","messages":[{"role":"user","content":"hi"}],"extra":${d}}`,
      5_000,
    ],
    ['the prompt', (d: string) => `{"model":"m","prompt":${d}}`, 100_000],
  ])('too deep in %s: 400 naming the limit, and nothing charged', async (_where, body, depth) => {
    const before = remaining(await sluice.app.request('/v1/chat/completions', chat(KEYS.a1)));
    const route = body('').startsWith('{"model":"m","prompt"') ? '/v1/completions' : '/v1/chat/completions';
    const res = await sluice.app.request(route, chat(KEYS.a1, body(deepText(depth))));
    expect(res.status).toBe(400);
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBeNull();
    const { error } = (await res.json()) as { error: { message: string; code: string; type: string; param: string } };
    expect(error.code).toBe('body_too_deep');
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/limit of 16 levels/);
    const after = remaining(await sluice.app.request('/v1/chat/completions', chat(KEYS.a1)));
    expect(after).toBe(before - 1);
  });

  it('names where the limit was passed', async () => {
    const res = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content: 'x' }], tools: nested(40) }),
    );
    const { error } = (await res.json()) as { error: { param: string } };
    expect(error.param).toMatch(/^tools\.0\.0\.0/);
  });

  it('a body exactly at the limit is served', async () => {
    // The body object is level 1; 15 arrays under `extra` make 16.
    const res = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content: 'x' }], extra: nested(15) }),
    );
    expect(res.status).toBe(200);
    const over = await sluice.app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content: 'x' }], extra: nested(16) }),
    );
    expect(over.status).toBe(400);
  });

  it('the admin API refuses deep and oversized bodies too', async () => {
    const withAdmin = await startTestSluice({ adminKey: 'sk-admin' });
    try {
      const put = (body: string) =>
        withAdmin.app.request('/admin/v1/limits', {
          method: 'PUT',
          headers: { authorization: 'Bearer sk-admin', 'content-type': 'application/json' },
          body,
        });
      const deep = await put(`{"target":{"level":"defaults"},"limits":{"rpm":${deepText(10_000)}}}`);
      expect(deep.status).toBe(400);
      expect(((await deep.json()) as { error: { code: string } }).error.code).toBe('body_too_deep');
      const huge = await put(
        JSON.stringify({ target: { level: 'defaults' }, limits: { rpm: 1 }, pad: 'x'.repeat(100_000) }),
      );
      expect(huge.status).toBe(413);
      expect((await withAdmin.app.request('/healthz')).status).toBe(200);
    } finally {
      await withAdmin.close();
    }
  });
});

describe('URLs the edge hands back', () => {
  const asyncChat = (host: string) =>
    chat(KEYS.a1, undefined, { prefer: 'respond-async', host, 'x-forwarded-host': host });

  it('are relative paths by default, whatever the Host header says', async () => {
    const res = await sluice.app.request('http://evil.example/v1/chat/completions', asyncChat('evil.example'));
    expect(res.status).toBe(202);
    const { id, status_url } = (await res.json()) as { id: string; status_url: string };
    expect(status_url).toBe(`/v1/requests/${id}`);
    expect(res.headers.get('location')).toBe(status_url);
  });

  it('use the configured public base URL', async () => {
    const configured = await startTestSluice({ edge: { publicBaseUrl: 'https://llm.example.com/' } });
    try {
      const res = await configured.app.request('http://evil.example/v1/chat/completions', asyncChat('evil.example'));
      const { id, status_url } = (await res.json()) as { id: string; status_url: string };
      expect(status_url).toBe(`https://llm.example.com/v1/requests/${id}`);
      expect(res.headers.get('location')).toBe(status_url);
    } finally {
      await configured.close();
    }
  });

  it('a base URL that is not absolute http(s) is refused at start', async () => {
    await expect(startTestSluice({ edge: { publicBaseUrl: 'llm.example.com' } })).rejects.toThrow(/publicBaseUrl/);
  });
});
