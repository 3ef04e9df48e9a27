import { describe, expect, it } from 'vitest';
import { scale } from '../../bench/scenarios/scale.js';

// Full size, as `npm run bench -- scale` runs it: 0 / 10k / 100k / 1M idle LiteTopics (`--size small` stops at 100k).
describe('scale (full: up to 1M idle LiteTopics)', () => {
  it('an idle LiteTopic costs at most 1 KiB at 1M', { timeout: 240_000 }, async () => {
    const out = await scale.run({ seed: 1, size: 'full', flags: {}, log: () => {} });
    const h = out.headline;
    console.log(`scale full: ${JSON.stringify(h)}`);
    expect(h.largestIdleLiteTopics).toBe(1_000_000);
    expect(h.bytesPerIdleLiteTopicAtLargest as number).toBeGreaterThan(0);
    expect(h.bytesPerIdleLiteTopicAtLargest as number).toBeLessThanOrEqual(1024);
    expect(h.cpuGrowth as number).toBeLessThan(2);
  });
});
