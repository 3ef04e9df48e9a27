import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createCongestion } from '../../../lib/dispatch/congestion.js';

describe('congestion control (AIMD per model)', () => {
  it('halves on 429/503 once per cool-down, recovers additively, and leaves other models alone', async () => {
    const clock = new VirtualClock(0);
    const changes: Array<[string, number]> = [];
    const c = createCongestion({ clock, onChange: (m, f) => changes.push([m, f]) });
    c.observe('a', { status: 503, latencyMs: 10 });
    c.observe('a', { status: 429, latencyMs: 10 }); // same burst: one signal
    expect(c.factor('a')).toBe(0.5);
    expect(c.factor('b')).toBe(1);
    await clock.advance(1_000);
    c.observe('a', { status: 429, latencyMs: 10 });
    expect(c.factor('a')).toBe(0.25);
    for (let i = 0; i < 5; i++) c.observe('a', { status: 200, latencyMs: 10 });
    expect(c.factor('a')).toBeCloseTo(0.5);
    for (let i = 0; i < 20; i++) c.observe('a', { status: 200, latencyMs: 10 });
    expect(c.factor('a')).toBe(1);
    expect(changes[0]).toEqual(['a', 0.5]);
    expect(changes.at(-1)).toEqual(['a', 1]);
  });

  it('treats latency past the model’s target as congestion, and never goes below the floor', async () => {
    const clock = new VirtualClock(0);
    const c = createCongestion({ clock, floor: 0.125 });
    for (let i = 0; i < 10; i++) {
      c.observe('m', { status: 200, latencyMs: 900, latencyTargetMs: 500 });
      await clock.advance(1_000);
    }
    expect(c.factor('m')).toBe(0.125);
    c.observe('m', { status: 200, latencyMs: 100, latencyTargetMs: 500 });
    expect(c.factor('m')).toBeCloseTo(0.175);
  });
});
