import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

describe('edge: deeply nested bodies', () => {
  let sluice: LocalSluice;
  beforeAll(async () => {
    sluice = await startTestSluice({ edge: { bodyLimitBytes: 1024 * 1024 } });
  });
  afterAll(() => sluice.close());

  it('a body nested past the stack is a 400, not a 500, on every route', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const bodies: Array<[string, string]> = [
      ['/v1/chat/completions', `{"model":"m","messages":[{"role":"user","content":"x","extra":${deep}}]}`],
      ['/v1/completions', `{"model":"m","prompt":"x","extra":${deep}}`],
      ['/v1/embeddings', `{"model":"m","input":"x","extra":${deep}}`],
      ['/v1/responses', `{"model":"m","input":[{"role":"user","content":"x","extra":${deep}}]}`],
    ];
    for (const [path, body] of bodies) {
      const res = await sluice.app.request(path, chat(KEYS.a1, body));
      expect(res.status, path).toBe(400);
      expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
    }
  });

  it('embeddings are not streamed: stream true is refused before admission', async () => {
    const res = await sluice.app.request('/v1/embeddings', chat(KEYS.a1, { model: 'm', input: 'x', stream: true }));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe('stream');
  });
});
