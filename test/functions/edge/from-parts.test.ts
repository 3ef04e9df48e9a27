import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeFromParts, edgeOptions } from '../../../functions/edge/from-parts.js';
import { readConfig } from '../../../functions/runtime/config.js';
import { createParts, type Parts } from '../../../functions/runtime/parts.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { chat, KEYS, testPolicy } from '../../support/local-sluice.js';

// Every edge process builds its app here; what its environment says must reach the app.
describe('createEdgeFromParts: settings read from the environment reach the edge', () => {
  let parts: Parts;
  const config = readConfig({
    SLUICE_POLICY_JSON: JSON.stringify(testPolicy('http://127.0.0.1:9/v1')),
    SLUICE_MAX_BODY_DEPTH: '8',
    SLUICE_BODY_LIMIT_BYTES: '2048',
    SLUICE_PUBLIC_BASE_URL: 'https://llm.example.com',
  });
  beforeAll(async () => {
    parts = await createParts(config, systemClock, silentLogger, { role: 'edge' });
  });
  afterAll(() => parts.close());

  const edge = (adminKey?: string) =>
    createEdgeFromParts({
      parts,
      clock: systemClock,
      log: silentLogger,
      options: edgeOptions(config),
      ...(adminKey ? { adminKeyHash: hashApiKey(adminKey) } : {}),
    });

  it('the body depth and size limits', async () => {
    const app = edge();
    const deep = `{"model":"m","messages":[{"role":"user","content":"x"}],"extra":${'['.repeat(20)}${']'.repeat(20)}}`;
    const tooDeep = await app.request('/v1/chat/completions', chat(KEYS.a1, deep));
    expect(tooDeep.status).toBe(400);
    expect(JSON.stringify(await tooDeep.json())).toMatch(/8/);
    const big = await app.request(
      '/v1/chat/completions',
      chat(KEYS.a1, { model: 'm', messages: [{ role: 'user', content: 'x'.repeat(4096) }] }),
    );
    expect(big.status).toBe(413);
  });

  it('status URLs from the public base URL, never the Host header', async () => {
    const res = await edge().request(
      '/v1/chat/completions',
      chat(
        KEYS.batch,
        { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
        { prefer: 'respond-async', host: 'evil.example' },
      ),
    );
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toMatch(/^https:\/\/llm\.example\.com\/v1\/requests\//);
  });

  it('the admin API only with a key', async () => {
    expect((await edge().request('/admin/v1/policy', { headers: { authorization: 'Bearer k' } })).status).toBe(404);
    expect((await edge('k').request('/admin/v1/policy', { headers: { authorization: 'Bearer k' } })).status).toBe(200);
  });
});
