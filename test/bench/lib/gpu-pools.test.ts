import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createGpuPools } from '../../../bench/lib/gpu-pools.js';
import { labPools, worldPolicyInput, type World } from '../../../bench/lib/world.js';
import { replayWorld } from '../../../bench/scenarios/replay.js';

const world = (pools?: Record<string, number>, slots = 6): World => ({
  name: 'pools',
  trace: [{ t: 0, account: 'a', model: 'big', tokens: 10 }],
  accounts: { a: { tenant: 't', tier: 'batch' } },
  gpu: { slots, queueLimit: slots },
  ...(pools ? { pools } : {}),
});

const body = (model: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
});

describe('one simulated pool per model', () => {
  it("serves each model from its own pool, reached by its upstream's origin, and adds their figures up", async () => {
    const clock = new VirtualClock(0);
    const w = world({ big: 4, small: 2 });
    const gpu = createGpuPools(w, clock, { models: [], slots: 6, queueLimit: 6, baseTokenMs: 10 });
    const policy = worldPolicyInput(w);
    expect(Object.keys(policy.models)).toEqual(['big', 'small']);
    expect(policy.models.big!.slots).toBe(4);
    const small = new URL(policy.models.small!.upstreams[0]!);
    const answer = gpu.byOrigin[small.origin]!(new Request(`${small.href}/chat/completions`, body('small')));
    const other = gpu.request('big', '/v1/chat/completions', body('big'));
    await clock.advance(10_000);
    expect((await answer).status).toBe(200);
    expect((await other).status).toBe(200);
    const stats = gpu.stats();
    expect(stats.slots).toBe(6);
    expect(stats.served).toBe(2);
    expect(stats.queueLimit).toBe(6);
    expect([...gpu.byModel].map(([m, p]) => [m, p.slots])).toEqual([
      ['big', 4],
      ['small', 2],
    ]);
    gpu.close();
  });

  it('takes a split that adds up to the GPU, and nothing else', () => {
    expect(labPools(world()).map((p) => [p.model, p.slots])).toEqual([['sim-llm', 6]]);
    expect(() => labPools(world({ big: 4, small: 1 }))).toThrow(/split the GPU's 6 slots/);
    expect(() => labPools(world({ big: 6, small: 0 }))).toThrow(/positive integer/);
  });

  it("replay --pools: every model of the trace needs a pool; the slots are the pools'; --output-tokens A-B", () => {
    const trace = [
      { t: 0, account: 'a', model: 'big', tokens: 10 },
      { t: 1, account: 'b', model: 'small', tokens: 10 },
    ];
    const w = replayWorld({ trace, flags: { pools: 'big=3,small=2' } });
    expect(w.gpu.slots).toBe(5);
    expect(w.trace.map((e) => e.model)).toEqual(['big', 'small']);
    expect(() => replayWorld({ trace, flags: { pools: 'big=3' } })).toThrow(/model small has no pool/);
    expect(() => replayWorld({ trace, flags: { pools: 'big=3,big=2,small=1' } })).toThrow(/each model once/);
    expect(() => replayWorld({ trace, flags: { pools: 'big=x,small=1' } })).toThrow(/positive integer/);
    expect(replayWorld({ trace, flags: { 'output-tokens': '30-300' } }).gpu).toMatchObject({
      minOutputTokens: 30,
      maxOutputTokens: 300,
    });
    expect(() => replayWorld({ trace, flags: { 'output-tokens': '300-30' } })).toThrow(/A-B with 1 <= A <= B/);
    expect(() => replayWorld({ trace, flags: { pools: 'big=3,small=2', 'gpu-slots': '5' } })).toThrow(
      /leave out --gpu-slots/,
    );
  });
});
