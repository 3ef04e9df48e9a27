import { describe, it, expect } from 'vitest';
import { chatBody, drain, lab, post, tracker } from './harness.js';

const CHAT = '/v1/chat/completions';
// 4000 characters = 1000 prompt tokens; a fixed 64-token answer makes the arithmetic exact.
const fixed = {
  slots: 8,
  baseTokenMs: 20,
  prefillMsPerKToken: 40,
  contentionFactor: 1,
  minOutputTokens: 64,
  maxOutputTokens: 64,
};
const prompt = (tag: string) => tag.padEnd(4000, '.');

async function timeOf(options: Record<string, unknown>, concurrent: number): Promise<number[]> {
  const { clock, sim } = lab(options);
  const t0 = clock.now();
  const track = tracker(clock);
  const pending = Array.from({ length: concurrent }, (_, i) => track(post(sim, CHAT, chatBody(prompt(`p${i}`)))));
  await drain(clock);
  const done = await Promise.all(pending);
  for (const d of done) {
    expect(d.res.status).toBe(200);
    expect((await d.res.json()).usage).toEqual({ prompt_tokens: 1000, completion_tokens: 64, total_tokens: 1064 });
  }
  return done.map((d) => d.at - t0);
}

describe('gpu-sim latency', () => {
  it('takes prefill + tokens x tokenMs, with tokenMs scaled by occupancy', async () => {
    const [alone] = await timeOf(fixed, 1);
    // busy 1 of 8: factor 1 + 1/8
    expect(alone).toBeCloseTo((40 + 64 * 20) * 1.125, 6);
    const full = await timeOf(fixed, 8);
    // busy 8 of 8: factor 2, for everyone
    for (const t of full) expect(t).toBeCloseTo((40 + 64 * 20) * 2, 6);
    expect(full[0]! / alone!).toBeGreaterThan(1.7);
  });

  it('does not slow down with load when contentionFactor is 0', async () => {
    const [alone] = await timeOf({ ...fixed, contentionFactor: 0 }, 1);
    const full = await timeOf({ ...fixed, contentionFactor: 0 }, 8);
    expect(alone).toBeCloseTo(40 + 64 * 20, 6);
    for (const t of full) expect(t).toBeCloseTo(alone!, 6);
  });

  it('re-reads the load per token: a running request slows when others join', async () => {
    const { clock, sim } = lab(fixed);
    const t0 = clock.now();
    const track = tracker(clock);
    const first = track(post(sim, CHAT, chatBody(prompt('first'))));
    await clock.advance(45 + 32 * 22.5); // prefill and half the tokens, alone
    const others = Array.from({ length: 7 }, (_, i) => track(post(sim, CHAT, chatBody(prompt(`late ${i}`)))));
    await drain(clock);
    const t = (await first).at - t0;
    expect(t).toBeGreaterThan((40 + 64 * 20) * 1.125 + 30 * 17.5); // the last ~30 tokens at 40 ms instead of 22.5
    expect(t).toBeLessThan((40 + 64 * 20) * 2);
    await Promise.all(others);
  });

  it('stretches every generation by the injected slowdown', async () => {
    const { clock, sim } = lab(fixed);
    sim.faults.setSlowdown(3);
    const t0 = clock.now();
    const p = tracker(clock)(post(sim, CHAT, chatBody(prompt('slow'))));
    await drain(clock);
    expect((await p).at - t0).toBeCloseTo((40 + 64 * 20) * 1.125 * 3, 6);
  });

  it('takes the queue wait plus the generation time when all slots are busy', async () => {
    const { clock, sim } = lab({ ...fixed, slots: 2 });
    const t0 = clock.now();
    const track = tracker(clock);
    const pending = [0, 1, 2].map((i) => track(post(sim, CHAT, chatBody(prompt(`q${i}`)))));
    await drain(clock);
    const [a, b, c] = await Promise.all(pending);
    const pair = (40 + 64 * 20) * 2; // both slots busy
    expect(a!.at - t0).toBeCloseTo(pair, 6);
    expect(b!.at - t0).toBeCloseTo(pair, 6);
    expect(Number(c!.res.headers.get('x-sim-queue-ms'))).toBeCloseTo(pair, 6);
    // c starts the instant a leaves, while b is still finishing: its prefill runs 2 of 2 busy,
    // its tokens 1 of 2 busy.
    expect(c!.at - t0).toBeCloseTo(pair + 40 * 2 + 64 * 20 * 1.5, 6);
  });
});
