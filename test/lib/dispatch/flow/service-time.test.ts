import { describe, expect, it } from 'vitest';
import { MAX_FLOW_SHARES, ServiceTime } from '../../../../lib/dispatch/flow/service-time.js';

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

  it("learns per model and flow the share of what calls ask that they use, the tier's until the flow has one", () => {
    const speed = new ServiceTime();
    const a = { tier: 'realtime', tenant: 't', account: 'a' };
    const b = { tier: 'realtime', tenant: 't', account: 'b' };
    expect(speed.expectedTokens('m', a, 1_000)).toBe(1_000);
    speed.observeUse('m', a, 100, 1_000);
    expect(speed.expectedTokens('m', a, 1_000)).toBeCloseTo(100);
    // b has no call of its own yet: its tier's share.
    expect(speed.expectedTokens('m', b, 1_000)).toBeCloseTo(100);
    // b leaves max_tokens out: estimated at the default, its calls use five times that. A share may
    // pass 1; a flow's own calls outweigh its tier's share as they add up (one call against the tier's
    // three, ten against three at most), and the tier's is a moving average of every flow's.
    speed.observeUse('m', b, 5_000, 1_000);
    const tier = 100 + 0.1 * (5_000 - 100);
    expect(speed.expectedTokens('m', { ...b, account: 'c' }, 1_000)).toBeCloseTo(tier);
    expect(speed.expectedTokens('m', b, 1_000)).toBeCloseTo((5_000 + 3 * tier) / 4);
    for (let i = 0; i < 20; i++) speed.observeUse('m', b, 5_000, 1_000);
    const tierNow = speed.expectedTokens('m', { ...b, account: 'c' }, 1_000);
    expect(speed.expectedTokens('m', b, 1_000)).toBeCloseTo((10 * 5_000 + 3 * tierNow) / 13);
    // a's own calls keep a short, whatever b's are.
    expect(speed.expectedTokens('m', a, 1_000)).toBeLessThan(tierNow);
    // One slip of the estimate (a call asked 1 token and used 10,000) counts 32 times what it asked at most.
    speed.observeUse('m', { ...a, tier: 'offline' }, 10_000, 1);
    expect(speed.expectedTokens('m', { ...a, tier: 'offline' }, 1_000)).toBeCloseTo(32_000);
    expect(speed.expectedTokens('m', { ...a, tier: 'batch' }, 1_000)).toBe(1_000);
    expect(speed.expectedTokens('n', a, 1_000)).toBe(1_000);
  });

  it('remembers the flows it saw last, MAX_FLOW_SHARES of them', () => {
    const speed = new ServiceTime();
    const flow = (i: number) => ({ tier: 'batch', tenant: 't', account: `a${i}` });
    speed.observeUse('m', flow(0), 0, 100);
    for (let i = 1; i <= MAX_FLOW_SHARES; i++) speed.observeUse('m', flow(i), 100, 100);
    // The first flow was forgotten: its tier's share now (about 1, against its own 0).
    expect(speed.expectedTokens('m', flow(0), 100)).toBeGreaterThan(99);
    expect(speed.expectedTokens('m', flow(1), 100)).toBeCloseTo(100);
  });
});
