import { describe, expect, it } from 'vitest';
import { waitForRelease } from '../../../../lib/dispatch/flow/release-spread.js';

describe('waitForRelease: mean wait until the next expected end, a call of callMs started', () => {
  it('is half the gap for evenly spread ends', () => {
    expect(waitForRelease([100, 200, 300], 400)).toBe(50);
  });

  it('prefers the call that ends in the widest gap to one beside an end already due or one past the last', () => {
    const ends = [200, 1_400, 1_500];
    const inGap = waitForRelease(ends, 800);
    const besideEnd = waitForRelease(ends, 1_450);
    const pastLast = waitForRelease(ends, 2_600);
    expect(inGap).toBeLessThan(besideEnd);
    expect(inGap).toBeLessThan(pastLast);
  });

  it('skips ends already past or not known, and is 0 with nothing to wait for', () => {
    expect(waitForRelease([-50, Infinity, 100], 300)).toBe(waitForRelease([100], 300));
    expect(waitForRelease([], 0)).toBe(0);
    expect(waitForRelease([], 400)).toBe(200);
  });
});
