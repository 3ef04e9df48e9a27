import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pace } from '../../../lib/limits/gcra.js';
import { tokenBucketTake, type TokenBucketState } from '../../../lib/limits/token-bucket.js';

describe('GCRA pacing', () => {
  it('burst 1 is a strict leaky bucket: one release per interval', () => {
    const spec = { rate: 10, burst: 1 };
    let tat: number | undefined;
    const first = pace(spec, tat, 1_000);
    expect(first.waitMs).toBe(0);
    tat = first.tat;
    const second = pace(spec, tat, 1_000);
    expect(second.waitMs).toBe(100);
    expect(second.tat).toBe(tat);
    expect(pace(spec, tat, 1_100).waitMs).toBe(0);
  });

  it('burst 50 at 10/s lets 50 through back to back, then one per 100 ms (the second seed)', () => {
    const spec = { rate: 10, burst: 50 };
    let tat: number | undefined;
    let released = 0;
    for (let i = 0; i < 60; i++) {
      const d = pace(spec, tat, 0);
      if (d.waitMs === 0) released++;
      tat = d.tat;
    }
    expect(released).toBe(50);
    expect(pace(spec, tat, 0).waitMs).toBe(100);
    expect(pace(spec, tat, 100).waitMs).toBe(0);
  });

  it('the wait it reports is exactly when the release becomes possible', () => {
    const spec = { rate: 4, burst: 3 };
    let tat: number | undefined;
    for (let i = 0; i < 3; i++) tat = pace(spec, tat, 0).tat;
    const d = pace(spec, tat, 10);
    expect(d.waitMs).toBeGreaterThan(0);
    expect(pace(spec, tat, 10 + d.waitMs - 1).waitMs).toBeGreaterThan(0);
    expect(pace(spec, tat, 10 + d.waitMs).waitMs).toBe(0);
  });

  it('booked slots follow the same schedule as releases one at a time (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 60 }),
        (interval, burst, n) => {
          const spec = { rate: 1000 / interval, burst };
          // n messages arrive at once; each books its slot.
          let tat: number | undefined;
          const booked: number[] = [];
          for (let i = 0; i < n; i++) {
            const d = pace(spec, tat, 0, Number.MAX_SAFE_INTEGER);
            tat = d.tat;
            booked.push(d.waitMs);
          }
          // The same messages released one by one, each asking again when told to wait.
          let tat2: number | undefined;
          const released: number[] = [];
          let now = 0;
          while (released.length < n) {
            const d = pace(spec, tat2, now);
            if (d.waitMs === 0) {
              released.push(now);
              tat2 = d.tat;
            } else now += d.waitMs;
          }
          expect(booked).toEqual(released);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('equals a token bucket of the same rate and burst on any arrival sequence (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }), // emission interval in ms
        fc.integer({ min: 1, max: 60 }), // burst
        fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 1, maxLength: 300 }), // gaps
        (interval, burst, gaps) => {
          const spec = { rate: 1000 / interval, burst };
          let tat: number | undefined;
          let bucket: TokenBucketState | undefined;
          let now = 1_000_000;
          for (const gap of gaps) {
            now += gap;
            const g = pace(spec, tat, now);
            const b = tokenBucketTake(interval, burst, bucket, now);
            bucket = b.state;
            tat = g.tat;
            expect(g.waitMs === 0).toBe(b.allowed);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
