import { describe, expect, it } from 'vitest';
import { createFairShareView } from '../../../lib/admission/fair-share-view.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { encodeReport, FAIR_SHARE_READ_EVERY_MS, FAIR_SHARE_TTL_MS } from '../../../lib/limits/fair-share.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { fairShareKey } from '../../../lib/store/keys.js';

describe('the edge view of fair-share reports', () => {
  it('reads the best live report, at most once per interval per model and tier', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    let reads = 0;
    const view = createFairShareView({ readMembers: (...a) => (reads++, store.readMembers(...a)) });
    const key = fairShareKey('m', 'batch');
    await store.putMember(key, 'd1', encodeReport({ cap: 3, rate: 0.1 }), FAIR_SHARE_TTL_MS, 64);
    await store.putMember(key, 'd2', encodeReport({ cap: 5, rate: 0.2 }), FAIR_SHARE_TTL_MS, 64);
    expect(await view.share('m', 'batch', clock.now())).toEqual({ cap: 5, rate: 0.2 });
    expect(await view.share('m', 'realtime', clock.now())).toBeUndefined();
    await Promise.all([view.share('m', 'batch', clock.now()), view.share('m', 'batch', clock.now())]);
    expect(reads).toBe(2);
    // The reports lapse when no dispatcher renews them: the view forgets them after its next read.
    await clock.advance(FAIR_SHARE_TTL_MS);
    expect(await view.share('m', 'batch', clock.now())).toBeUndefined();
    expect(reads).toBe(3);
    await clock.advance(FAIR_SHARE_READ_EVERY_MS - 1);
    await view.share('m', 'batch', clock.now());
    expect(reads).toBe(3);
  });

  it('a store that does not answer leaves admission as it was', async () => {
    const view = createFairShareView({ readMembers: () => Promise.reject(new Error('down')) });
    expect(await view.share('m', 'batch', 0)).toBeUndefined();
  });
});
