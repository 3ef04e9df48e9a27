import { describe, expect, it } from 'vitest';
import { scale } from '../../bench/scenarios/scale.js';

// CI runs 0 / 10k / 100k idle LiteTopics (`scaleSmall`); `npm run bench -- scale` adds 1M.
describe('scale (small: 10k and 100k idle LiteTopics)', () => {
  it('an idle LiteTopic costs at most 1 KiB, and dispatcher CPU per delivery does not grow with idle ones', { timeout: 180_000 }, async () => {
    const out = await scale.run({ seed: 1, size: 'small', flags: {}, log: () => {} });
    const h = out.headline;
    console.log(`scale small: ${JSON.stringify(h)}`);
    expect(h.largestIdleLiteTopics).toBe(100_000);
    expect(h.bytesPerIdleLiteTopicAtLargest as number).toBeGreaterThan(0);
    expect(h.bytesPerIdleLiteTopicAtLargest as number).toBeLessThanOrEqual(1024);
    // CPU is measured on a shared 2-core machine: allow noise, not growth with the idle count.
    expect(h.cpuGrowth as number).toBeLessThan(2);
  });
});
