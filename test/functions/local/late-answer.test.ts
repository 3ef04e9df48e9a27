/**
 * A request the model cannot start before its deadline is answered at once, and the answer
 * says when to retry the way an admission refusal does: 429 with `Retry-After` and
 * `x-sluice-reason` (the dispatcher writes the refusal, the edge turns it into headers).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { defaultTiers } from '../../../lib/policy/defaults.js';
import type { PolicyInput } from '../../../lib/policy/schema.js';
import { chat, KEYS, startTestSluice, testPolicy } from '../../support/local-sluice.js';

const CALL_TOKENS = 100;
const MAX_WAIT_MS = 2_000;

let sluice: LocalSluice;
beforeAll(async () => {
  sluice = await startTestSluice({
    // One slot, and every call holds it about a second: the work ahead is easy to exceed.
    gpu: { models: ['m'], slots: 1, baseTokenMs: 10, minOutputTokens: CALL_TOKENS, maxOutputTokens: CALL_TOKENS },
    policy: (url) =>
      testPolicy(url, {
        tiers: {
          ...defaultTiers,
          realtime: { ...defaultTiers.realtime, maxQueueWaitMs: MAX_WAIT_MS },
        } as PolicyInput['tiers'],
        models: { m: { slots: 1, upstreams: [url], defaultMaxTokens: CALL_TOKENS } },
      }),
  });
}, 30_000);
afterAll(() => sluice?.close());

const send = (key: string, n: number) =>
  fetch(`${sluice.url}/v1/chat/completions`, chat(key, { model: 'm', messages: [{ role: 'user', content: `n${n}` }] }));

it('answers 429 with Retry-After and x-sluice-reason when the work ahead outlasts the deadline', async () => {
  // One call first, so the dispatcher knows how long a call holds the slot.
  expect((await send(KEYS.a1, 0)).status).toBe(200);
  const sentAt = Date.now();
  const answers = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const res = await send([KEYS.a1, KEYS.a2, KEYS.b1][i % 3]!, i + 1);
      return { res, ms: Date.now() - sentAt, body: (await res.json()) as { error?: { code?: string } } };
    }),
  );
  const late = answers.filter((a) => a.res.status === 429);
  expect(late.length).toBeGreaterThan(0);
  for (const { res, body, ms } of late) {
    expect(body.error?.code).toBe('capacity_deadline');
    expect(res.headers.get('x-sluice-reason')).toBe('capacity_deadline');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // At once, not after the tier's whole maximum wait.
    expect(ms).toBeLessThan(MAX_WAIT_MS);
  }
  // What was served carries no refusal headers.
  for (const { res } of answers.filter((a) => a.res.status === 200)) expect(res.headers.get('retry-after')).toBeNull();
});
