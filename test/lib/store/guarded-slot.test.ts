import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { sleep } from '../../../lib/clock/clock.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { createGuardedStore } from '../../../lib/store/guarded.js';
import { slotGateKey } from '../../../lib/store/keys.js';
import type { RateStore } from '../../../lib/store/types.js';

describe('guarded store: slots', () => {
  it('gives back a lease the shared store granted after the call had timed out and the fallback refused', async () => {
    const clock = new VirtualClock(0);
    const shared = createEmbeddedStore(clock);
    const primary: RateStore = {
      ...shared,
      async acquireSlot(request) {
        const decision = await shared.acquireSlot(request);
        await sleep(clock, 1_000);
        return decision;
      },
    };
    const guarded = createGuardedStore({ primary, clock, timeoutMs: 250, probeIntervalMs: 10 });
    const key = slotGateKey('m');
    // The shared gate has 2 slots; the fallback's gate a quarter of them (1).
    const gate = { key, capacity: 2, tiers: {}, tier: 'batch', leaseMs: 60_000 };
    const first = guarded.acquireSlot({ ...gate, leaseId: 'held-locally' });
    await clock.advance(2_000);
    expect((await first).granted).toBe(true);
    // Probing again: the shared store grants again, too late; the fallback's gate is full and refuses.
    const second = guarded.acquireSlot({ ...gate, leaseId: 'timed-out' });
    await clock.advance(2_000);
    expect((await second).granted).toBe(false);
    await clock.advance(10);
    await guarded.releaseSlot(key, 'held-locally');
    await clock.advance(10);
    // Nothing is left taken in the shared store: both its slots are free.
    expect((await shared.acquireSlot({ ...gate, leaseId: 'a' })).granted).toBe(true);
    expect((await shared.acquireSlot({ ...gate, leaseId: 'b' })).granted).toBe(true);
  });
});
