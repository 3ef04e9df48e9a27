import { describe, expect, it } from 'vitest';
import { seedPolicy } from '../../infra/seed-policy.ts';
import { parsePolicy } from '../../lib/policy/schema.ts';

describe('the seeded policy and CloudFront origin read timeout', () => {
  it('seeds async a sync tier whose queue wait may outlast the origin timeout, and leaves the others', () => {
    const tiers = parsePolicy(seedPolicy({ m: ['http://gpu/v1'] }, { syncWaitLimitMs: 60_000 })).tiers;
    for (const t of Object.values(tiers)) {
      // Whatever stays sync answers before CloudFront gives up waiting for a byte.
      if (t.replyMode === 'sync') expect(t.maxQueueWaitMs).toBeLessThan(60_000);
    }
    expect(tiers.batch!.replyMode).toBe('async');
    expect(tiers.realtime!.replyMode).toBe('sync');
  });

  it('without a limit, keeps the defaults', () => {
    expect(parsePolicy(seedPolicy({ m: ['http://gpu/v1'] })).tiers.batch!.replyMode).toBe('sync');
  });
});
