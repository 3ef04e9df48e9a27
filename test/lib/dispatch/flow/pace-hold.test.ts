import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../lib/clock/virtual-clock.js';
import { createPaceHold } from '../../../../lib/dispatch/flow/pace-hold.js';

describe('pace hold', () => {
  it('holds a short wait until its instant, and refuses long waits, more than maxHeld, or no room', async () => {
    const clock = new VirtualClock(0);
    let others = 0;
    const hold = createPaceHold({ clock, maxHeld: 2, maxHoldMs: 1_000, room: (held) => held + others < 3 });
    expect(hold.hold(1_001)).toBeUndefined();
    let done = false;
    void hold.hold(300)!.then(() => (done = true));
    others = 2;
    // One held and two others waiting for a slot fill the layer's three places.
    expect(hold.hold(100)).toBeUndefined();
    others = 0;
    expect(hold.hold(100)).toBeDefined();
    expect(hold.hold(100)).toBeUndefined();
    expect(hold.held()).toBe(2);
    await clock.advance(299);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(hold.held()).toBe(0);
  });
});
