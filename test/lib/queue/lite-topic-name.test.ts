import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { liteTopicName, MAX_LITE_TOPIC_LENGTH, type LiteTopicOf } from '../../../lib/queue/lite-topic-name.js';

const VALID = /^[A-Za-z0-9_-]+$/;
const part = fc.oneof(
  fc.string({ maxLength: 24 }),
  fc.constantFrom('a', 'a.b', 'a-b', 'a_2db', '_', '-', '租户', 'x'.repeat(70)),
);
const of = fc.record<LiteTopicOf>({ tier: part, tenant: part, account: part, model: part });
const key = (t: LiteTopicOf) => JSON.stringify([t.tier, t.tenant, t.account, t.model]);

describe('liteTopicName', () => {
  it('gives two accounts of one tenant their own LiteTopic', () => {
    const chat = liteTopicName({ tier: 'batch', tenant: 'acme', account: 'acme-chat', model: 'llama' });
    const etl = liteTopicName({ tier: 'batch', tenant: 'acme', account: 'acme-etl', model: 'llama' });
    expect(chat).not.toBe(etl);
    expect(chat).toBe('batch-acme-acme_2dchat-llama');
  });

  it('never reads a separator inside a part', () => {
    const names = [
      liteTopicName({ tier: 'a.b', tenant: 'c', account: 'd', model: 'e' }),
      liteTopicName({ tier: 'a', tenant: 'b.c', account: 'd', model: 'e' }),
      liteTopicName({ tier: 'a', tenant: 'b', account: 'c.d', model: 'e' }),
      liteTopicName({ tier: 'a', tenant: 'b-c', account: 'd', model: 'e' }),
      liteTopicName({ tier: 'a', tenant: 'b', account: 'c-d', model: 'e' }),
    ];
    expect(new Set(names).size).toBe(names.length);
  });

  it('is within the proxy charset and length, and distinct for distinct parts', () => {
    fc.assert(
      fc.property(of, of, (a, b) => {
        const x = liteTopicName(a);
        const y = liteTopicName(b);
        expect(x).toMatch(VALID);
        expect(Buffer.byteLength(x)).toBeLessThanOrEqual(MAX_LITE_TOPIC_LENGTH);
        if (key(a) !== key(b)) expect(x).not.toBe(y);
        else expect(x).toBe(y);
      }),
      { numRuns: 2_000 },
    );
  });
});
