import { describe, expect, it } from 'vitest';
import {
  bestReport,
  encodeReport,
  fairShare,
  fairShareRetryMs,
  latePlaces,
  SHED_MARGIN,
} from '../../../lib/limits/fair-share.js';

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

describe('latePlaces', () => {
  // 8 slots of 10 s and the margin: 0.96 starts a second of time left.
  const perSecond = (8 * SHED_MARGIN) / 10;

  it('finds the places the flow does not reach before they lapse', () => {
    expect(SHED_MARGIN).toBe(1.25);
    // 60 flows of 15, every place with 300 s left: 300 starts, 5 a flow. The head and the 4 after it
    // start in time, the 10 behind them do not.
    const depths = Array.from({ length: 60 }, () => 15);
    expect(perSecond * 300).toBe(300);
    const lapses = Array.from({ length: 15 }, () => 300_000);
    expect(latePlaces(lapses, 0, { ...tier, depths })).toEqual(Array.from({ length: 10 }, (_, i) => i + 5));
    // Each place its own time left, 10 + 55i s for the i-th; a place with k kept ahead of it needs
    // k + 1 starts, one every 60 s. The 1st (65 s) is late; the 2nd then needs 2 in 120 s (in
    // time), the 3rd 3 in 175 s (late: 180), the 4th 3 in 230 s, the 5th 4 in 285 s, the 6th 5 in 340 s.
    const spread = Array.from({ length: 7 }, (_, i) => 1_000 * (10 + 55 * i));
    expect(latePlaces(spread, 0, { ...tier, depths })).toEqual([1, 3]);
  });

  it('keeps a fresh place behind a late one: the late one is not kept, and the fresh one moves up', () => {
    // 240 flows of 3: one start each within 300 s (a round of 250 s). The head runs already; an
    // old place with 10 s left is late, and the fresh one behind it needs one start only.
    const depths = Array.from({ length: 240 }, () => 3);
    expect(latePlaces([0, 10_000, 300_000], 0, { ...tier, depths }, 1)).toEqual([1]);
    // Behind a place kept instead, the same fresh place needs two: late.
    expect(latePlaces([0, 300_000, 300_000], 0, { ...tier, depths }, 1)).toEqual([2]);
  });

  it('finds none while every flow fits in its time, and never the head', () => {
    expect(latePlaces([1_000, 200_000, 300_000], 0, { ...tier, depths: [3, 1, 1] })).toEqual([]);
    // 2 s left: not one start for the 3 flows in it.
    expect(latePlaces([1_000, 2_000, 300_000], 0, { ...tier, depths: [3, 1, 1] })).toEqual([1]);
    // The head with no time left at all is not late here; the others with none are.
    expect(latePlaces([0, 0, 0], 0, { ...tier, depths: [3] })).toEqual([1, 2]);
  });

  it("counts the flow's calls running as its first places, started already", () => {
    // 600 flows of 2: one start each every 625 s, while every place has 300 s left.
    const depths = Array.from({ length: 600 }, () => 2);
    expect(latePlaces([300_000, 300_000], 0, { ...tier, depths })).toEqual([1]);
    // Its first place a running call, the second needs one start only: still none in 300 s.
    expect(latePlaces([300_000, 300_000], 0, { ...tier, depths }, 1)).toEqual([1]);
    // 240 flows: a round of 250 s, one start each within 300 s, not the two the second place needs
    // unless the first is running already.
    const fewer = Array.from({ length: 240 }, () => 2);
    expect(latePlaces([300_000, 300_000], 0, { ...tier, depths: fewer })).toEqual([1]);
    expect(latePlaces([300_000, 300_000], 0, { ...tier, depths: fewer }, 1)).toEqual([]);
  });

  it('finds none when nothing is known of the model', () => {
    expect(latePlaces([0, 0], 0, { ...tier, meanCallMs: 0, depths: [2] })).toEqual([]);
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
