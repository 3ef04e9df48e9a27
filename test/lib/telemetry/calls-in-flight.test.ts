import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { CallsInFlight } from '../../../lib/telemetry/calls-in-flight.js';

describe('calls in flight', () => {
  it('counts slots in use per model and tier until each call ends', () => {
    const calls = new CallsInFlight(new VirtualClock(0));
    calls.started('r1', { tier: 'realtime', model: 'm', held: false });
    calls.started('r2', { tier: 'batch', model: 'm', held: true });
    calls.started('r3', { tier: 'batch', model: 'm', held: false });
    calls.started('r4', { tier: 'batch', model: 'n', held: false });
    expect(calls.ended('r2')).toEqual({ tier: 'batch', model: 'm', held: true, at: 0 });
    expect(calls.ended('never-started')).toBeUndefined();
    expect(calls.slotsInUse()).toEqual(
      new Map([
        [
          'm',
          new Map([
            ['realtime', 1],
            ['batch', 1],
          ]),
        ],
        ['n', new Map([['batch', 1]])],
      ]),
    );
  });

  it('at its bound drops calls whose end was never seen for ten minutes, then all if that is not enough', async () => {
    const clock = new VirtualClock(0);
    const calls = new CallsInFlight(clock, 2);
    calls.started('old', { tier: 'batch', model: 'm', held: false });
    await clock.advance(10 * 60_000 + 1);
    calls.started('new', { tier: 'batch', model: 'm', held: false });
    calls.started('newer', { tier: 'batch', model: 'm', held: false });
    expect(calls.ended('old')).toBeUndefined();
    expect(calls.slotsInUse().get('m')?.get('batch')).toBe(2);
    calls.started('newest', { tier: 'batch', model: 'm', held: false });
    expect(calls.slotsInUse().get('m')?.get('batch')).toBe(1);
  });
});
