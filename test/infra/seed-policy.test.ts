import { describe, expect, it } from 'vitest';
import { edgeMaxSyncWaitMs, seedPolicy } from '../../infra/seed-policy.ts';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from '../../functions/runtime/config.ts';
import { parsePolicy } from '../../lib/policy/schema.ts';

describe('the seeded policy and the edge function timeout', () => {
  it("seeds async a sync tier whose wait and upstream call may outlast the edge's hold, and leaves the others", () => {
    const limit = edgeMaxSyncWaitMs(300);
    const tiers = parsePolicy(seedPolicy({ m: ['http://gpu/v1'] }, { syncWaitLimitMs: limit })).tiers;
    for (const t of Object.values(tiers)) {
      // Whatever stays sync is answered before the function times out.
      if (t.replyMode === 'sync') expect(t.maxQueueWaitMs + DEFAULT_UPSTREAM_TIMEOUT_MS).toBeLessThanOrEqual(limit);
    }
    expect(tiers.batch!.replyMode).toBe('async');
    expect(tiers.realtime!.replyMode).toBe('sync');
  });

  it('a longer function timeout keeps the batch tier sync (keepalive bytes cover CloudFront)', () => {
    expect(
      parsePolicy(seedPolicy({ m: ['http://gpu/v1'] }, { syncWaitLimitMs: edgeMaxSyncWaitMs(900) })).tiers.batch!
        .replyMode,
    ).toBe('sync');
  });

  it('without a limit, keeps the defaults', () => {
    expect(parsePolicy(seedPolicy({ m: ['http://gpu/v1'] })).tiers.batch!.replyMode).toBe('sync');
  });
});
