/**
 * Generated traffic against an embedded Sluice, through `app.request`: bodies,
 * headers, paths and methods across /v1/* and /admin/v1/*, with hostile names and
 * deep and huge values mixed into otherwise valid requests. No answer is a 5xx,
 * every error is OpenAI-shaped, and the app serves normally afterwards.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { defaultLimits } from '../../../lib/policy/defaults.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { chat, fastGpu, KEYS, startTestSluice, testPolicy } from '../../support/local-sluice.js';

const ADMIN = 'sk-test-admin';
const C1 = 'sk-test-c1';
const BATCH = 25;
const RUNS = 400; // BATCH x RUNS = 10,000 requests per run
const BODY_LIMIT = 64 * 1024;
const HOSTILE = [
  ...Object.getOwnPropertyNames(Object.prototype),
  '__proto__',
  'prototype',
  '',
  ' ',
  '..',
  '%',
  '%00',
  '\u0000',
  'ta\n',
  '😀',
  'a'.repeat(300),
];

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({
    adminKey: ADMIN,
    gpu: { ...fastGpu, slots: 64 },
    edge: { bodyLimitBytes: BODY_LIMIT, upstreamTimeoutMs: 5_000 },
    // Pace and slots wide open: every admitted request is served at once, so any 5xx is a bug.
    // Tenant tc / account c1 are never named by the generator: the health check after uses them.
    policy: (url) =>
      testPolicy(url, {
        defaults: {
          ...defaultLimits,
          accountModel: { ...defaultLimits.accountModel, rate: 100_000, burst: 100_000, reservoir: 100_000 },
        },
        models: { m: { slots: 64, upstreams: [url], defaultMaxTokens: 16 } },
        tenants: { ta: {}, tb: {}, tc: {}, tp: {} },
        accounts: {
          ...testPolicy(url).accounts,
          c1: { tenant: 'tc', tier: 'realtime', keyHashes: [hashApiKey(C1)] },
          p1: { tenant: 'tp', tier: 'batch', keyHashes: [hashApiKey('sk-test-p1')] },
        },
      }),
  });
}, 30_000);
afterAll(() => sluice?.close());

const name = fc.oneof(fc.constantFrom('m', 'ta', 'tb', 'a1', 'b1', 'batch', ...HOSTILE), fc.string({ maxLength: 20 }));
/**
 * What operators name: real entries only where pausing or limiting them cannot hold up the
 * generated clients (tenant tp / account p1 send nothing), so every client is answered at once.
 */
const operatorName = fc.oneof(fc.constantFrom('m', 'tp', 'p1', ...HOSTILE), fc.string({ maxLength: 20 }));
const deep = fc.integer({ min: 1, max: 20_000 }).map((d) => `${'['.repeat(d)}0${']'.repeat(d)}`);
const huge = fc.constantFrom('x'.repeat(BODY_LIMIT + 1), `"${'y'.repeat(BODY_LIMIT - 100)}"`);
/** A JSON text: mostly real values, sometimes very deep or very large. */
const jsonText = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: deep },
  { weight: 1, arbitrary: huge },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);
const content = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 50 }).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: jsonText },
);
const message = fc.record({ role: fc.constantFrom('user', 'user', 'system', '', 'constructor'), content });
const messages = fc
  .array(message, { minLength: 1, maxLength: 3 })
  .map((ms) => `[${ms.map((m) => `{"role":${JSON.stringify(m.role)},"content":${m.content}}`).join(',')}]`);
const field = fc.tuple(
  fc.constantFrom(
    'max_tokens',
    'stream',
    'temperature',
    'tools',
    '__proto__',
    'constructor',
    'prompt',
    'input',
    'extra',
  ),
  jsonText,
);
const inferenceBody = fc
  .record({
    model: fc.oneof({ weight: 3, arbitrary: fc.constant('m') }, { weight: 2, arbitrary: name }),
    messages,
    fields: fc.array(field, { maxLength: 2 }),
  })
  .map(
    ({ model, messages, fields }) =>
      `{"model":${JSON.stringify(model)},"messages":${messages},"prompt":"hi","input":"hi"${fields.map(([k, v]) => `,${JSON.stringify(k)}:${v}`).join('')}}`,
  );
const limitsBody = fc
  .record({
    target: fc.oneof(
      fc.record({
        level: fc.constantFrom('tenant', 'account', 'model', 'defaults', 'nope'),
        tenant: operatorName,
        account: operatorName,
        model: operatorName,
      }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    limits: fc.oneof(
      fc.record({ rpm: fc.integer({ min: -5, max: 100_000 }), tpm: fc.integer({ min: 1_000, max: 10_000_000 }) }),
      fc.jsonValue({ maxDepth: 2 }),
    ),
  })
  .map((b) => JSON.stringify(b));
const body = fc.oneof(
  { weight: 5, arbitrary: inferenceBody },
  { weight: 1, arbitrary: limitsBody },
  { weight: 1, arbitrary: jsonText },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const seg = (s: fc.Arbitrary<string>) => s.map((v) => (v === '' ? v : encodeURIComponent(v)));
const path = fc.oneof(
  fc.constantFrom(
    '/v1/chat/completions',
    '/v1/completions',
    '/v1/embeddings',
    '/v1/models',
    '/admin/v1/policy',
    '/admin/v1/reservations',
    '/admin/v1/limits',
  ),
  fc.tuple(fc.constantFrom('/v1/requests/', '/admin/v1/reservations/'), seg(name)).map(([p, id]) => p + id),
  fc
    .tuple(fc.constantFrom('tenants', 'accounts'), seg(operatorName), fc.constantFrom('pause', 'resume', 'x'))
    .map(([kind, id, action]) => `/admin/v1/${kind}/${id}/${action}`),
  fc.tuple(seg(name), seg(name)).map(([a, b]) => `/admin/v1/limits?account=${a}&model=${b}`),
  fc
    .tuple(
      fc.constantFrom('/v1/', '/admin/v1/', '/v1/requests/'),
      fc.constantFrom('%', '%E0%A4%A', '..%2F..', '%2e%2e/', '/x//y', '?a=%zz', '%00'),
    )
    .map(([p, s]) => p + s),
);
const printable = fc.string({
  maxLength: 40,
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
const validKey = fc.constantFrom(
  `Bearer ${KEYS.a1}`,
  `Bearer ${KEYS.a2}`,
  `Bearer ${KEYS.b1}`,
  `Bearer ${KEYS.batch}`,
  `bearer   ${KEYS.a1}  `,
);
const headers = fc.record(
  {
    authorization: fc.oneof(
      { weight: 8, arbitrary: validKey },
      { weight: 1, arbitrary: fc.constantFrom(`Bearer ${ADMIN}`, 'Bearer', 'Basic abc', '') },
      { weight: 1, arbitrary: printable.map((s) => `Bearer ${s}`) },
    ),
    'content-type': fc.oneof(
      {
        weight: 8,
        arbitrary: fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/vnd.x+json'),
      },
      { weight: 1, arbitrary: fc.constantFrom('text/plain', '', 'application/jsonx', 'multipart/form-data') },
    ),
    prefer: fc.constantFrom('respond-async', 'respond-async, wait=5', 'wait=1', ''),
    host: fc.constantFrom('evil.example', 'localhost', ''),
    'x-forwarded-host': printable,
  },
  { requiredKeys: ['authorization', 'content-type'] },
);
/** Mostly a route's own method with its own kind of body; the rest anything against anything. */
const wellFormed = fc.oneof(
  fc.record({
    method: fc.constant('POST'),
    path: fc.constantFrom('/v1/chat/completions', '/v1/completions', '/v1/embeddings'),
    body: inferenceBody,
  }),
  fc.record({ method: fc.constant('PUT'), path: fc.constant('/admin/v1/limits'), body: limitsBody }),
  fc.record({ method: fc.constantFrom('GET', 'POST', 'DELETE'), path, body: fc.constant(undefined) }),
);
const anything = fc.record({
  method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'),
  path,
  body,
});
const request = fc
  .tuple(fc.oneof({ weight: 7, arbitrary: wellFormed }, { weight: 3, arbitrary: anything }), headers, fc.boolean())
  .map(([r, h, asAdmin]) => ({
    ...r,
    headers: asAdmin && r.path.startsWith('/admin/') ? { ...h, authorization: `Bearer ${ADMIN}` } : h,
  }));

type Generated = typeof request extends fc.Arbitrary<infer T> ? T : never;
const statuses = new Map<number, number>();

async function send(r: Generated): Promise<void> {
  const hasBody = r.body !== undefined && r.method !== 'GET' && r.method !== 'HEAD';
  const res = await sluice.app.request(r.path, {
    method: r.method,
    headers: r.headers,
    body: hasBody ? r.body : undefined,
  });
  const text = await res.text();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  const where = `${r.method} ${r.path} -> ${res.status}: ${text.slice(0, 300)}`;
  expect(res.status, where).toBeLessThan(500);
  if (res.status >= 400 && r.method !== 'HEAD') {
    expect(res.headers.get('content-type'), where).toMatch(/^application\/json/);
    const { error } = JSON.parse(text) as { error: Record<string, unknown> };
    expect(Object.keys(error).sort(), where).toEqual(['code', 'message', 'param', 'type']);
    expect(typeof error.message, where).toBe('string');
    expect(typeof error.type, where).toBe('string');
    expect(error.code === null || typeof error.code === 'string', where).toBe(true);
    expect(error.param === null || typeof error.param === 'string', where).toBe(true);
  }
}

describe('fuzz: generated requests across /v1 and /admin/v1', () => {
  it(`${BATCH * RUNS} requests: no 5xx, every error OpenAI-shaped, healthy after`, async () => {
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
        await Promise.all(batch.map(send));
        sent += batch.length;
      }),
      { numRuns: RUNS },
    );
    expect(sent).toBeGreaterThanOrEqual(10_000);
    // The generator reaches past validation: served, queued, refused by limits, not found, unauthorized, too large.
    console.log('fuzz statuses', JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b))));
    for (const status of [200, 202, 400, 401, 404, 413, 415])
      expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);

    expect(({} as Record<string, unknown>).paused).toBeUndefined();
    expect(() => parsePolicy(JSON.parse(JSON.stringify(sluice.policy())))).not.toThrow();
    expect((await sluice.app.request('/healthz')).status).toBe(200);
    // An account the generator never named is served as on the first request.
    const ok = await sluice.app.request('/v1/chat/completions', chat(C1));
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(((await ok.json()) as { object: string }).object).toBe('chat.completion');
    const models = await sluice.app.request('/v1/models', { headers: { authorization: `Bearer ${C1}` } });
    expect(models.status).toBe(200);
  }, 120_000);
});
