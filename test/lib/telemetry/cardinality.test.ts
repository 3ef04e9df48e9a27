import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { OTHER, TopNLabels } from '../../../lib/telemetry/cardinality.js';

describe('TopNLabels', () => {
  it('names the first N values at once and counts the rest as "other"', async () => {
    const labels = new TopNLabels({ clock: new VirtualClock(0), size: 2 });
    expect(labels.touch('a')).toBe('a');
    expect(labels.touch('b')).toBe('b');
    expect(labels.touch('c')).toBe(OTHER);
    expect(labels.label('a')).toBe('a');
    expect(labels.label('never-seen')).toBe(OTHER);
  });

  it('gives a quiet name up to a tenant that bursts now, after the refresh interval', async () => {
    const clock = new VirtualClock(0);
    const labels = new TopNLabels({ clock, size: 2, refreshMs: 1_000, halfLifeMs: 10_000 });
    labels.touch('a');
    labels.touch('b');
    for (let i = 0; i < 100; i++) expect(labels.touch('burster')).toBe(OTHER);
    await clock.advance(1_000);
    expect(labels.touch('burster')).toBe('burster');
    // One of the quiet two lost its name; the busiest is listed first.
    expect(labels.names()[0]).toBe('burster');
    expect(labels.names()).toHaveLength(2);
  });

  it('does not flap between two tenants of similar traffic (hysteresis)', async () => {
    const clock = new VirtualClock(0);
    const labels = new TopNLabels({ clock, size: 1, refreshMs: 100, hysteresis: 1.5 });
    for (let i = 0; i < 10; i++) labels.touch('a');
    for (let i = 0; i < 12; i++) labels.touch('b');
    await clock.advance(100);
    labels.touch('a');
    expect(labels.label('a')).toBe('a');
    expect(labels.label('b')).toBe(OTHER);
  });

  it('stays bounded however many distinct values arrive', async () => {
    const clock = new VirtualClock(0);
    const labels = new TopNLabels({ clock, size: 5, maxTracked: 100 });
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) {
      seen.add(labels.touch(`tenant-${i % 1_000}`));
      if (i % 50 === 0) await clock.advance(10_000);
    }
    expect(seen.size).toBeLessThanOrEqual(1_000);
    expect(labels.names().length).toBe(5);
    expect((labels as unknown as { scores: Map<string, unknown> }).scores.size).toBeLessThanOrEqual(101);
  });
});
