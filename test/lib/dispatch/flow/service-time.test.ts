import { describe, expect, it } from 'vitest';
import { ServiceTime } from '../../../../lib/dispatch/flow/service-time.js';

describe("a model's observed speed", () => {
  it('averages completed calls, slot time per token', () => {
    const speed = new ServiceTime();
    expect(speed.estimateMs('m', 100)).toBeUndefined();
    speed.observe('m', 1_000, 100);
    expect(speed.estimateMs('m', 50)).toBe(500);
    speed.observe('m', 3_000, 100);
    // A moving average: one sample moves it a tenth of the way.
    expect(speed.estimateMs('m', 100)).toBeCloseTo(1_200);
  });

  it('before the first completion, is at least what the slowest call in flight already took a token', () => {
    const speed = new ServiceTime();
    expect(speed.atLeastMs('m', 100, 0)).toBe(0);
    speed.started('m', 'a', 0, 100);
    speed.started('m', 'b', 500, 10);
    // At 1 s: a took 10 ms a token at least, b 50.
    expect(speed.atLeastMs('m', 100, 1_000)).toBe(5_000);
    speed.ended('m', 'b');
    expect(speed.atLeastMs('m', 100, 1_000)).toBe(1_000);
    expect(speed.estimateMs('m', 100)).toBeUndefined();
    // Another model's calls say nothing of this one.
    expect(speed.atLeastMs('n', 100, 1_000)).toBe(0);
    // Once a call completed, its average is the estimate.
    speed.observe('m', 2_000, 100);
    expect(speed.atLeastMs('m', 100, 60_000)).toBe(2_000);
  });

  it('learns per model and tier the share of what calls ask that they use', () => {
    const speed = new ServiceTime();
    expect(speed.expectedTokens('m', 'realtime', 1_000)).toBe(1_000);
    speed.observeUse('m', 'realtime', 100, 1_000);
    expect(speed.expectedTokens('m', 'realtime', 1_000)).toBe(100);
    // A moving average, which may pass what was asked: a client that left max_tokens out was
    // estimated at the model's default and generated more.
    speed.observeUse('m', 'realtime', 5_000, 1_000);
    expect(speed.expectedTokens('m', 'realtime', 1_000)).toBeCloseTo(590);
    // One slip of the estimate (a call asked 1 token and used 10,000) counts 32 times what it asked at most.
    speed.observeUse('m', 'offline', 10_000, 1);
    expect(speed.expectedTokens('m', 'offline', 1_000)).toBe(32_000);
    expect(speed.expectedTokens('m', 'batch', 1_000)).toBe(1_000);
    expect(speed.expectedTokens('n', 'realtime', 1_000)).toBe(1_000);
  });
});
