import { describe, expect, it } from 'vitest';
import {
  MAX_FLOW_SHARES,
  MovingFit,
  PRIOR_PROMPT_RATIO,
  ServiceTime,
} from '../../../../lib/dispatch/flow/service-time.js';

describe("a model's observed speed", () => {
  const out = (output: number) => ({ prompt: 0, output });

  it('averages completed calls, slot time per token', () => {
    const speed = new ServiceTime();
    expect(speed.estimateMs('m', out(100))).toBeUndefined();
    speed.observe('m', 1_000, out(100));
    expect(speed.estimateMs('m', out(50))).toBeCloseTo(500);
    speed.observe('m', 3_000, out(100));
    // A moving average: one sample moves it a tenth of the way.
    expect(speed.estimateMs('m', out(100))).toBeCloseTo(1_200);
  });

  it('tells the time of a prompt token from an output token once calls of both shapes were seen', () => {
    const speed = new ServiceTime();
    // The simulated GPU's pace: 0.04 ms a prompt token, 10 an output token.
    const ms = (t: { prompt: number; output: number }) => 0.04 * t.prompt + 10 * t.output;
    const rag = { prompt: 6_000, output: 150 };
    const story = { prompt: 50, output: 1_500 };
    // One shape alone cannot tell them apart: the prior ratio splits its time, and that shape is right.
    speed.observe('m', ms(rag), rag);
    expect(speed.estimateMs('m', rag)).toBeCloseTo(ms(rag), 0);
    for (let i = 0; i < 5; i++) {
      speed.observe('m', ms(story), story);
      speed.observe('m', ms(rag), rag);
    }
    // By one rate a token, the story would be judged at the retrieval's pace (0.25 ms a token:
    // 386 ms), the retrieval at the story's (6.6 ms: 40 s).
    expect(speed.estimateMs('m', story)! / ms(story)).toBeCloseTo(1, 2);
    expect(speed.estimateMs('m', rag)! / ms(rag)).toBeCloseTo(1, 2);
    expect(speed.estimateMs('m', { prompt: 2_000, output: 500 })! / ms({ prompt: 2_000, output: 500 })).toBeCloseTo(
      1,
      2,
    );
  });

  it('never takes a rate below 0: calls that a negative one would fit best are fitted by the other alone', () => {
    const fit = new MovingFit();
    // Longer prompts ran faster here (another load): the least-squares prompt rate would be negative.
    fit.add({ prompt: 10, output: 100 }, 2_000);
    fit.add({ prompt: 10_000, output: 100 }, 1_000);
    const rates = fit.rates()!;
    expect(rates.perPrompt).toBe(0);
    expect(rates.perOutput).toBeGreaterThan(0);
    expect(new MovingFit().rates()).toBeUndefined();
  });

  it('before the first completion, is at least what the slowest call in flight already took, at the prior ratio', () => {
    const speed = new ServiceTime();
    expect(speed.atLeast('m', 0)(out(100))).toBe(0);
    speed.started('m', 'a', 0, out(100));
    speed.started('m', 'b', 500, out(10));
    // At 1 s: a took 10 ms a token at least, b 50.
    expect(speed.atLeast('m', 1_000)(out(100))).toBe(5_000);
    speed.ended('m', 'b');
    expect(speed.atLeast('m', 1_000)(out(100))).toBe(1_000);
    // A prompt token counts PRIOR_PROMPT_RATIO of an output token.
    expect(speed.atLeast('m', 1_000)({ prompt: 10_000, output: 0 })).toBeCloseTo(1_000 * 100 * PRIOR_PROMPT_RATIO);
    expect(speed.estimateMs('m', out(100))).toBeUndefined();
    // Another model's calls say nothing of this one.
    expect(speed.atLeast('n', 1_000)(out(100))).toBe(0);
    // Once a call completed, its fit is the estimate.
    speed.observe('m', 2_000, out(100));
    expect(speed.atLeast('m', 60_000)(out(100))).toBeCloseTo(2_000);
  });

  it("learns per model and flow the share of what calls ask that they use, the tier's until the flow has one", () => {
    const speed = new ServiceTime();
    const a = { tier: 'realtime', tenant: 't', account: 'a' };
    const b = { tier: 'realtime', tenant: 't', account: 'b' };
    expect(speed.expectedOutput('m', a, 1_000)).toBe(1_000);
    speed.observeUse('m', a, 100, 1_000);
    expect(speed.expectedOutput('m', a, 1_000)).toBeCloseTo(100);
    // b has no call of its own yet: its tier's share.
    expect(speed.expectedOutput('m', b, 1_000)).toBeCloseTo(100);
    // b leaves max_tokens out: estimated at the default, its calls use five times that. A share may
    // pass 1; a flow's own calls outweigh its tier's share as they add up (one call against the tier's
    // three, ten against three at most), and the tier's is a moving average of every flow's.
    speed.observeUse('m', b, 5_000, 1_000);
    const tier = 100 + 0.1 * (5_000 - 100);
    expect(speed.expectedOutput('m', { ...b, account: 'c' }, 1_000)).toBeCloseTo(tier);
    expect(speed.expectedOutput('m', b, 1_000)).toBeCloseTo((5_000 + 3 * tier) / 4);
    for (let i = 0; i < 20; i++) speed.observeUse('m', b, 5_000, 1_000);
    const tierNow = speed.expectedOutput('m', { ...b, account: 'c' }, 1_000);
    expect(speed.expectedOutput('m', b, 1_000)).toBeCloseTo((10 * 5_000 + 3 * tierNow) / 13);
    // a's own calls keep a short, whatever b's are.
    expect(speed.expectedOutput('m', a, 1_000)).toBeLessThan(tierNow);
    // One slip of the estimate (a call asked 1 token and used 10,000) counts 32 times what it asked at most.
    speed.observeUse('m', { ...a, tier: 'offline' }, 10_000, 1);
    expect(speed.expectedOutput('m', { ...a, tier: 'offline' }, 1_000)).toBeCloseTo(32_000);
    expect(speed.expectedOutput('m', { ...a, tier: 'batch' }, 1_000)).toBe(1_000);
    expect(speed.expectedOutput('n', a, 1_000)).toBe(1_000);
  });

  it("judges a flow without calls of its own by its tier's asks of the same size", () => {
    const speed = new ServiceTime();
    const flow = (account: string) => ({ tier: 'realtime', tenant: 't', account });
    // Clients asking 4,096 use 600; clients leaving max_tokens out (asked at the default, 256) use 600 too.
    for (let i = 0; i < 10; i++) {
      speed.observeUse('m', flow(`asks-${i}`), 600, 4_096);
      speed.observeUse('m', flow(`omits-${i}`), 600, 256);
    }
    expect(speed.expectedOutput('m', flow('new-asker'), 4_000)).toBeCloseTo((4_000 * 600) / 4_096, -1);
    expect(speed.expectedOutput('m', flow('new-omitter'), 256)).toBeCloseTo(600, -1);
    // An ask of a size never seen: the tier's mix.
    const mix = speed.expectedOutput('m', flow('new'), 1_000);
    expect(mix).toBeGreaterThan(1_000 * (600 / 4_096));
    expect(mix).toBeLessThan(1_000 * (600 / 256));
  });

  it('remembers the flows it saw last, MAX_FLOW_SHARES of them', () => {
    const speed = new ServiceTime();
    const flow = (i: number) => ({ tier: 'batch', tenant: 't', account: `a${i}` });
    speed.observeUse('m', flow(0), 0, 100);
    for (let i = 1; i <= MAX_FLOW_SHARES; i++) speed.observeUse('m', flow(i), 100, 100);
    // The first flow was forgotten: its tier's share now (about 1, against its own 0).
    expect(speed.expectedOutput('m', flow(0), 100)).toBeGreaterThan(99);
    expect(speed.expectedOutput('m', flow(1), 100)).toBeCloseTo(100);
  });
});
