import { describe, expect, it } from 'vitest';
import { headlineEntries, ms, versusBest } from '../../bench/lib/versus.js';

describe('Sluice against the best baseline', () => {
  it("picks the best baseline for the figure's direction and says whether Sluice beats it", () => {
    const higher = versusBest(0.9, { shallow: 0.5, fcfs: 0.95, priority: 0.92 }, 'higher');
    expect(higher).toMatchObject({ best: 0.95, bestIs: 'fcfs', verdict: 'worse' });
    const lower = versusBest(100, { shallow: 50, fcfs: 300, priority: 120 }, 'lower');
    expect(lower).toMatchObject({ best: 50, bestIs: 'shallow', verdict: 'worse' });
    expect(versusBest(10, { shallow: 50, fcfs: 300, priority: 120 }, 'lower').verdict).toBe('better');
    // Ties go to the first baseline listed; an equal Sluice is a tie, not a win.
    expect(versusBest(1, { shallow: 1, fcfs: 1, priority: 1 }, 'higher')).toMatchObject({
      bestIs: 'shallow',
      verdict: 'tie',
    });
    // A percentile on requests never served is Infinity: the worst a wait can be.
    expect(versusBest(500, { shallow: Infinity, fcfs: 900, priority: Infinity }, 'lower')).toMatchObject({
      bestIs: 'fcfs',
      verdict: 'better',
    });
    expect(ms(Infinity)).toBe('never');
  });

  it('headline entries name Sluice, every baseline, the best and the verdict', () => {
    expect(
      headlineEntries('RealtimeSuccess', versusBest(0.99, { shallow: 0.8, fcfs: 0.9, priority: 1 }, 'higher')),
    ).toEqual({
      sluiceRealtimeSuccess: 0.99,
      shallowRealtimeSuccess: 0.8,
      fcfsRealtimeSuccess: 0.9,
      priorityRealtimeSuccess: 1,
      bestBaselineRealtimeSuccess: 1,
      bestBaselineRealtimeSuccessIs: 'priority',
      sluiceVsBestRealtimeSuccess: 'worse',
    });
  });
});
