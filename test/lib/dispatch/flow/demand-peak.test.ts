import { describe, expect, it } from 'vitest';
import { DemandPeak } from '../../../../lib/dispatch/flow/demand-peak.js';

describe('DemandPeak: the largest sample within a sliding window', () => {
  it('keeps a peak for the window, then falls to the largest sample after it', () => {
    const d = new DemandPeak();
    d.observe('rt', 1, 0);
    d.observe('rt', 4, 1_000);
    d.observe('rt', 2, 2_000);
    d.observe('rt', 3, 3_000);
    expect(d.peak('rt', 3_000, 10_000)).toBe(4);
    expect(d.peak('rt', 11_000, 10_000)).toBe(4);
    expect(d.peak('rt', 11_001, 10_000)).toBe(3);
    expect(d.peak('rt', 13_001, 10_000)).toBe(0);
  });

  it('keeps keys apart, and a key never seen peaks at zero', () => {
    const d = new DemandPeak();
    d.observe('rt', 5, 0);
    d.observe('batch', 2, 0);
    expect(d.peak('rt', 1, 10)).toBe(5);
    expect(d.peak('batch', 1, 10)).toBe(2);
    expect(d.peak('offline', 1, 10)).toBe(0);
  });

  it('holds one sample per fall in value, however many are observed', () => {
    const d = new DemandPeak();
    for (let t = 0; t < 10_000; t++) d.observe('rt', t % 7, t);
    expect(d.peak('rt', 10_000, 20)).toBe(6);
    expect((d as unknown as { samples: Map<string, unknown[]> }).samples.get('rt')!.length).toBeLessThanOrEqual(7);
  });
});
