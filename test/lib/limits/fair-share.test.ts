import { describe, expect, it } from 'vitest';
import { bestReport, encodeReport, fairShare, fairShareRetryMs } from '../../../lib/limits/fair-share.js';

// 8 slots, 10 s calls, 300 s wait: the model starts 240 within the wait.
const tier = { slots: 8, meanCallMs: 10_000, maxWaitMs: 300_000 };

describe('fairShare', () => {
  it('says nothing while everything waiting fits in what the whole model starts within the wait', () => {
    expect(fairShare({ ...tier, depths: [200, 20, 20] })).toBeUndefined();
    // One long burst beside light flows: served whole as they drain.
    expect(fairShare({ ...tier, depths: [230, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1] })).toBeUndefined();
    expect(fairShare({ ...tier, depths: [] })).toBeUndefined();
  });

  it('fills equal flows alike: 60 flows of 15 share 240 starts, 4 each', () => {
    const share = fairShare({ ...tier, depths: Array.from({ length: 60 }, () => 15) });
    expect(share?.cap).toBe(4);
    // One round of 60 flows on 8 slots of 10 s: 75 s.
    expect(share?.rate).toBeCloseTo(1 / 75);
  });

  it('lets flows below the level keep all they hold, and shares the rest among the deep ones', () => {
    // 10 light flows of 4 take 40; 200 left for the 2 deep ones: 100 each.
    expect(fairShare({ ...tier, depths: [500, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 300] })?.cap).toBe(100);
  });

  it('is the largest level whose starts fit, whatever the order', () => {
    const depths = [7, 300, 1, 90, 45, 45, 2, 120];
    const share = fairShare({ ...tier, depths })!;
    const used = (cap: number) => depths.reduce((a, d) => a + Math.min(d, cap), 0);
    expect(used(share.cap)).toBeLessThanOrEqual(240);
    expect(used(share.cap + 1)).toBeGreaterThan(240);
    expect(fairShare({ ...tier, depths: [...depths].reverse() })).toEqual(share);
  });

  it('keeps one place per LiteTopic when even one each does not fit', () => {
    expect(fairShare({ ...tier, depths: Array.from({ length: 500 }, () => 3) })?.cap).toBe(1);
  });

  it('says nothing without slots, call times or a wait', () => {
    expect(fairShare({ ...tier, slots: 0, depths: [1000] })).toBeUndefined();
    expect(fairShare({ ...tier, meanCallMs: 0, depths: [1000] })).toBeUndefined();
    expect(fairShare({ ...tier, maxWaitMs: 0, depths: [1000] })).toBeUndefined();
  });
});

describe('reports', () => {
  it('the edge takes the highest level reported, and ignores what does not parse', () => {
    const a = encodeReport({ cap: 4, rate: 0.5 });
    const b = encodeReport({ cap: 9, rate: 0.25 });
    expect(bestReport([a, b, 'nonsense', '0 1', '3 -1', '2.5 1', ''])).toEqual({ cap: 9, rate: 0.25 });
    expect(bestReport(['x'])).toBeUndefined();
  });

  it('Retry-After: one round for each request past the level', () => {
    expect(fairShareRetryMs(4, { cap: 4, rate: 0.5 })).toBe(2_000);
    expect(fairShareRetryMs(9, { cap: 4, rate: 0.5 })).toBe(12_000);
  });
});
