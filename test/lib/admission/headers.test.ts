import { describe, expect, it } from 'vitest';
import { openAiDuration, rateLimitHeaders } from '../../../lib/admission/headers.js';
import type { WindowState } from '../../../lib/store/types.js';

describe('openAiDuration: Go time.Duration strings, as OpenAI sends them', () => {
  it.each([
    [0, '0s'],
    [20, '20ms'],
    [999, '999ms'],
    [1000, '1s'],
    [1500, '1.5s'],
    [1250, '1.25s'],
    [6000, '6s'],
    [59_999, '59.999s'],
    [60_000, '1m0s'],
    [90_000, '1m30s'],
    [3_600_000, '1h0m0s'],
    [3_723_400, '1h2m3.4s'],
    [-5, '0s'],
  ])('%d ms -> %s', (ms, text) => {
    expect(openAiDuration(ms)).toBe(text);
  });
});

const w = (
  scope: string,
  unit: 'requests' | 'tokens',
  limit: number,
  remaining: number,
  resetMs = 30_500,
): WindowState => ({
  scope,
  unit,
  limit,
  remaining,
  windowMs: 60_000,
  windowStart: 0,
  resetMs,
});

describe('rateLimitHeaders', () => {
  const headers = rateLimitHeaders([
    w('account-model', 'requests', 600, 590),
    w('account-model', 'tokens', 200_000, 150_000),
    w('tenant', 'tokens', 1_000_000, 100_000, 1500),
  ]);

  it('names each policy as x-sluice-reason names the refusal, with its quota unit', () => {
    expect(headers['ratelimit-policy']).toBe(
      '"account-model:requests";q=600;qu="requests";w=60, "account-model:tokens";q=200000;sluice-qu="tokens";w=60, "tenant:tokens";q=1000000;sluice-qu="tokens";w=60',
    );
    expect(headers['ratelimit']).toBe(
      '"account-model:requests";r=590;t=31, "account-model:tokens";r=150000;t=31, "tenant:tokens";r=100000;t=2',
    );
  });

  it('OpenAI headers follow the window closest to refusing, per unit', () => {
    expect(headers['x-ratelimit-remaining-tokens']).toBe('100000');
    expect(headers['x-ratelimit-limit-tokens']).toBe('1000000');
    expect(headers['x-ratelimit-reset-tokens']).toBe('1.5s');
    expect(headers['x-ratelimit-reset-requests']).toBe('30.5s');
  });

  it('no windows, no fields', () => {
    expect(rateLimitHeaders([])).toEqual({});
  });
});
