import { describe, expect, it } from 'vitest';
import { LOOPING_ACCOUNT, retryLoopScenario, timeToTopBurster } from '../../bench/scenarios/retry-loop.js';
import type { Attempt } from '../../bench/lib/recorder.js';

describe('retry-loop (small: 150 s, loop 1/s from 30 s to 120 s, 8 GPU slots)', () => {
  it(
    'the looping account is the top burster within seconds; others keep their success',
    { timeout: 240_000 },
    async () => {
      const out = await retryLoopScenario.run({ seed: 1, size: 'small', flags: {}, log: () => {} });
      const h = out.headline;
      console.log(`retry-loop small: ${JSON.stringify(h)}`);
      expect(h.sluiceTimeToTopBursterMs).not.toBeNull();
      expect(h.sluiceTimeToTopBursterMs as number).toBeLessThanOrEqual(30_000);
      expect(h.shallowTimeToTopBursterMs as number).toBeLessThanOrEqual(30_000);
      // Sluice's own dashboard view (lib/telemetry) names it within the seed's 30 s.
      expect(h.sluiceDashboardTopBursterMs).not.toBeNull();
      expect(h.sluiceDashboardTopBursterMs as number).toBeLessThanOrEqual(30_000);
      // Every baseline holds the account to the hard cap Sluice's degrade tier runs to: above it
      // the loop multiplies its attempts on 429s. Sluice degrades the account below the cap
      // (slower, not refused), so it sends no more than the hard limiter and is served no less.
      expect(h.sluiceLoopAttempts as number).toBeLessThanOrEqual(h.shallowLoopAttempts as number);
      expect(h.sluiceLoopRequestSuccess as number).toBeGreaterThanOrEqual(h.shallowLoopRequestSuccess as number);
      expect(out.params.loopingAccountHardCapRpm).toBe(90);
      // Everyone else is still served.
      expect(h.sluiceOthersSuccess as number).toBeGreaterThanOrEqual(h.sluiceOthersSuccessWithoutLoop as number);
    },
  );

  it('timeToTopBurster finds the first second the account leads the trailing window', () => {
    const at = (account: string, sentAt: number, request: number): Attempt => ({
      request,
      account,
      tier: 't',
      tenant: account,
      sentAt,
    });
    const attempts = [
      at('a', 500, 0),
      at('a', 1_500, 1),
      at(LOOPING_ACCOUNT, 2_100, 2),
      at(LOOPING_ACCOUNT, 2_200, 3),
      at(LOOPING_ACCOUNT, 2_300, 4),
    ];
    expect(timeToTopBurster(attempts, 0, LOOPING_ACCOUNT, 1_000, 10_000, 10_000)).toBe(2_000);
    expect(timeToTopBurster(attempts, 0, 'nobody', 1_000, 10_000, 10_000)).toBeNull();
  });
});
