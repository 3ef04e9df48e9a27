import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { OTHER } from '../../../lib/telemetry/cardinality.js';
import { FlowWindow } from '../../../lib/telemetry/flow-window.js';

const window = (clock: VirtualClock) =>
  new FlowWindow({ clock, burstWindowMs: 10_000, historyMs: 5_000, bucketMs: 1_000 });

describe('flow window', () => {
  it('sums what tenants and accounts offered within the burst window only', async () => {
    const clock = new VirtualClock(100_500);
    const w = window(clock);
    w.offered({ tenant: 'a', account: 'a1', tier: 'batch' }, 'admitted');
    await clock.advance(4_000);
    w.offered({ tenant: 'a', account: 'a2', tier: 'batch' }, 'refused');
    w.offered({ tenant: 'b', account: 'b1', tier: 'realtime' }, 'warned');
    let lately = w.offeredLately();
    expect(lately.tenants.get('a')).toEqual({ admitted: 1, refused: 1, warned: 0 });
    expect(lately.accounts.get('b1')).toEqual({ tenant: 'b', tier: 'realtime', admitted: 0, refused: 0, warned: 1 });
    // The first bucket (100 s) leaves the window once the window starts after it.
    await clock.advance(6_000);
    lately = w.offeredLately();
    expect(lately.tenants.get('a')).toEqual({ admitted: 0, refused: 1, warned: 0 });
    expect(lately.accounts.has('a1')).toBe(false);
  });

  it('folds keys past its cap per bucket into "other"', () => {
    const w = window(new VirtualClock(0));
    for (let i = 0; i < 10_001; i++) w.offered({ tenant: `t${i}`, account: `a${i}`, tier: 'batch' }, 'admitted');
    const lately = w.offeredLately();
    expect(lately.tenants.size).toBe(10_001);
    expect(lately.tenants.get(OTHER)).toEqual({ admitted: 1, refused: 0, warned: 0 });
    expect(lately.tenants.has('t10000')).toBe(false);
  });

  it('charts outcomes per tier, one point per step, oldest first, zeros where nothing happened', async () => {
    const clock = new VirtualClock(20_000);
    const w = window(clock);
    w.outcome('batch', 'completed');
    w.outcome('batch', 'completed');
    await clock.advance(2_000);
    w.outcome('batch', 'expired');
    w.outcome('constructor', 'failed');
    const view = w.historyView(['realtime', 'batch']);
    expect(view).toMatchObject({ start: 18_000, stepMs: 1_000 });
    expect(Object.keys(view.tiers).sort()).toEqual(['batch', 'constructor', 'realtime']);
    expect(view.tiers.batch!.completed).toEqual([0, 0, 2, 0, 0]);
    expect(view.tiers.batch!.expired).toEqual([0, 0, 0, 0, 1]);
    expect(view.tiers.realtime!.admitted).toEqual([0, 0, 0, 0, 0]);
    const odd: string = 'constructor';
    expect(view.tiers[odd]!.failed).toEqual([0, 0, 0, 0, 1]);
    // Past the history the points are gone.
    await clock.advance(10_000);
    expect(w.historyView([]).tiers.batch!.completed).toEqual([0, 0, 0, 0, 0]);
  });
});
