import { describe, expect, it } from 'vitest';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { basePolicy } from './fixtures.js';

describe('policy schema', () => {
  it('fills the second seed defaults', () => {
    const p = parsePolicy(basePolicy());
    expect(Object.fromEntries(Object.entries(p.tiers).map(([k, t]) => [k, [t.weight, t.share]]))).toEqual({
      realtime: [6, 0.6],
      batch: [2, 0.25],
      offline: [1, 0.15],
    });
    expect(p.defaults.accountModel).toMatchObject({ rate: 10, burst: 50 });
    expect(p.reservations).toEqual([]);
  });

  it('lists every problem by path in plain words', () => {
    const bad = basePolicy();
    bad.accounts.svc1 = { tenant: 'nobody', tier: 'vip', keyHashes: ['not-a-hash'] };
    bad.tiers = { ...bad.tiers, extra: { weight: 1, share: 0.5, overQuota: 'reject', maxQueueWaitMs: 10 } };
    let message = '';
    try {
      parsePolicy(bad);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('accounts.svc1.keyHashes.0: a SHA-256 hex digest');
    expect(message).toContain('accounts.svc1.tenant: unknown tenant "nobody"');
    expect(message).toContain('accounts.svc1.tier: unknown tier "vip"');
    expect(message).toMatch(/tiers: tier shares add up to 1\.5/);
  });

  it('refuses unknown fields rather than silently ignoring a typo', () => {
    const bad = basePolicy() as Record<string, unknown>;
    bad.defaults = {
      ...(bad.defaults as object),
      accountModel: { rpm: 1, tpm: 1, rate: 1, burst: 1, reservoir: 1, rmp: 5 },
    };
    expect(() => parsePolicy(bad)).toThrow(/rmp/);
  });

  it("takes slots from the servers' metrics only between minSlots and maxSlots around the declared ones", () => {
    const p = basePolicy();
    p.models.m!.saturation = {};
    expect(parsePolicy(p).models.m!.saturation).toEqual({
      minSlots: 1,
      queueDepthThreshold: 0,
      kvCacheThreshold: 0.8,
      refreshMs: 1_000,
      probeAfterMs: 30_000,
    });
    p.models.m!.saturation = { maxSlots: 4 };
    expect(() => parsePolicy(p)).toThrow(/models\.m\.saturation: saturation needs minSlots <= slots <= maxSlots/);
    p.models.m!.saturation = { refreshMs: 10 };
    expect(() => parsePolicy(p)).toThrow(/models\.m\.saturation\.refreshMs/);
  });
});
