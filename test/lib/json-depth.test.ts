import { describe, expect, it } from 'vitest';
import { encodeEnvelope, MAX_ENVELOPE_BODY_DEPTH, type Envelope } from '../../lib/envelope.js';
import { findTooDeep, TooDeepError } from '../../lib/json-depth.js';

const deep = (depth: number) => JSON.parse(`${'['.repeat(depth)}1${']'.repeat(depth)}`) as unknown;

describe('findTooDeep', () => {
  it('counts containers, not scalars', () => {
    expect(findTooDeep(1, 0)).toBeUndefined();
    expect(findTooDeep({}, 1)).toBeUndefined();
    expect(findTooDeep({ a: [1] }, 2)).toBeUndefined();
    expect(findTooDeep({ a: [1] }, 1)).toEqual({ path: 'a' });
  });

  it('walks a million levels without recursion', () => {
    expect(findTooDeep(deep(1_000_000), 64)?.path).toMatch(/^0\.0\.0/);
  });

  it('finds the deep branch beside shallow ones', () => {
    expect(findTooDeep({ a: 1, b: { c: [{ d: deep(10) }] } }, 8)?.path).toMatch(/^b\.c\.0\.d\.0/);
  });
});

describe('the envelope encoder', () => {
  const envelope = (body: Record<string, unknown>): Envelope => ({
    id: 'r',
    account: 'a',
    tenant: 't',
    tier: 'realtime',
    model: 'm',
    liteTopic: 'l',
    operation: 'chat.completions',
    body,
    mode: 'sync',
    enqueuedAt: 0,
    deadline: 1,
    tokenEstimate: 1,
    charged: [],
    paceFactor: 1,
  });

  it('refuses a body deeper than it carries with a named error, not a stack overflow', () => {
    expect(() => encodeEnvelope(envelope({ x: deep(50_000) }))).toThrow(TooDeepError);
  });

  it('encodes a body at its limit', () => {
    expect(encodeEnvelope(envelope({ x: deep(MAX_ENVELOPE_BODY_DEPTH - 2) }))).toContain('"x"');
  });
});
