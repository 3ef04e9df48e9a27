import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  alignedWindowStart,
  charge,
  checkWindows,
  reconcileWindow,
  type WindowCounter,
} from '../../../lib/limits/fixed-window.js';

const minute = { limit: 3, windowMs: 60_000, cost: 1 };

/** Runs requests through one window the way a store does: charge only when allowed. */
function run(times: number[], spec = minute): boolean[] {
  let counter: WindowCounter | undefined;
  return times.map((t) => {
    const d = checkWindows([spec], [counter], t);
    if (d.allowed) counter = charge(d.checks[0]!, spec.cost);
    return d.allowed;
  });
}

describe('fixed window', () => {
  it('aligns windows to the clock, not to the first request', () => {
    expect(alignedWindowStart(125_000, 60_000)).toBe(120_000);
    // Three at 119 s fill the window that ends at 120 s; the 4th at 120 s is a new window.
    expect(run([119_000, 119_500, 119_900, 119_999, 120_000])).toEqual([true, true, true, false, true]);
  });

  it('a refused request consumes nothing', () => {
    let counter: WindowCounter | undefined = { windowStart: 0, count: 2 };
    const big = { limit: 3, windowMs: 60_000, cost: 5 };
    const refused = checkWindows([big], [counter], 10);
    expect(refused.allowed).toBe(false);
    // The refusal left the counter as it was, so a small request still fits.
    const small = checkWindows([minute], [counter], 11);
    expect(small.allowed).toBe(true);
    counter = charge(small.checks[0]!, 1);
    expect(counter.count).toBe(3);
  });

  it('reports time to reset and remaining', () => {
    const d = checkWindows([minute], [{ windowStart: 60_000, count: 3 }], 90_000);
    expect(d.allowed).toBe(false);
    expect(d.retryAfterMs).toBe(30_000);
    expect(d.checks[0]!.used).toBe(3);
  });

  it('charges all windows or none: the first refusing window is named', () => {
    const specs = [
      { limit: 10, windowMs: 60_000, cost: 1 },
      { limit: 1, windowMs: 1_000, cost: 1 },
    ];
    const d = checkWindows(specs, [undefined, { windowStart: 5_000, count: 1 }], 5_400);
    expect(d.allowed).toBe(false);
    expect(d.firstDenied).toBe(1);
    expect(d.retryAfterMs).toBe(600);
  });

  it('retry-after waits for every refusing window', () => {
    const specs = [
      { limit: 1, windowMs: 60_000, cost: 1 },
      { limit: 1, windowMs: 1_000, cost: 1 },
    ];
    const d = checkWindows(
      specs,
      [
        { windowStart: 0, count: 1 },
        { windowStart: 5_000, count: 1 },
      ],
      5_400,
    );
    expect(d.retryAfterMs).toBe(54_600);
  });

  it('a counter from an earlier window counts as empty', () => {
    const d = checkWindows([minute], [{ windowStart: 0, count: 3 }], 60_000);
    expect(d.allowed).toBe(true);
  });

  it('reconciliation corrects the charged window only', () => {
    const c = { windowStart: 60_000, count: 500 };
    expect(reconcileWindow(c, 60_000, -200)).toEqual({ windowStart: 60_000, count: 300 });
    expect(reconcileWindow(c, 0, -200)).toBe(c);
    expect(reconcileWindow(c, 60_000, -900)).toEqual({ windowStart: 60_000, count: 0 });
    expect(reconcileWindow(undefined, 60_000, 5)).toBeUndefined();
  });

  it('never admits more than the limit in any window (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300_000 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 20 }),
        (raw, limit) => {
          const times = [...raw].sort((a, b) => a - b);
          const allowed = run(times, { limit, windowMs: 60_000, cost: 1 });
          const perWindow = new Map<number, number>();
          times.forEach((t, i) => {
            if (allowed[i]) perWindow.set(Math.floor(t / 60_000), (perWindow.get(Math.floor(t / 60_000)) ?? 0) + 1);
          });
          for (const [w, n] of perWindow) {
            expect(n).toBeLessThanOrEqual(limit);
            // Work-conserving: a window refused something only once it was full.
            const refusedInWindow = times.some((t, i) => !allowed[i] && Math.floor(t / 60_000) === w);
            if (refusedInWindow) expect(n).toBe(limit);
          }
        },
      ),
    );
  });
});
