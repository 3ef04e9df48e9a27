import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../lib/clock/clock.js';
import { SlotPool } from '../../../functions/gpu-sim/slots.js';

/** A wall clock at its worst: every read is a millisecond later than the one before. */
function tickingClock(): Clock {
  let t = 1_000;
  return { now: () => t++, setTimer: () => () => {} };
}

const pool = (clock: Clock, slots: number) =>
  new SlotPool({ clock, slots, queueLimit: null, maxQueueWaitMs: null, initialHoldMs: 100 });

describe('SlotPool leases say whether the request queued', () => {
  it('a request granted at once did not queue, however the clock ticks between reads', async () => {
    const p = pool(tickingClock(), 2);
    const got = await p.acquire();
    expect(got.ok).toBe(true);
    if (!got.ok) return;
    // Before: queuedMs read the clock twice and came out 1 on a ticking clock, which the
    // lab counted as "queued inside the GPU" on the real engine.
    expect(got.lease.queued).toBe(false);
    expect(got.lease.queuedMs).toBe(0);
  });

  it('a request that waited behind busy slots queued, even for less than a millisecond', async () => {
    let t = 5_000;
    const frozen: Clock = { now: () => t, setTimer: () => () => {} };
    const p = pool(frozen, 1);
    const first = await p.acquire();
    const second = p.acquire();
    if (!first.ok) throw new Error('the first request gets the free slot');
    first.lease.release();
    const got = await second;
    if (!got.ok) throw new Error('the waiter gets the freed slot');
    expect(got.lease.queued).toBe(true);
    expect(got.lease.queuedMs).toBe(0);
    expect(p.peakQueue).toBe(1);
  });
});
