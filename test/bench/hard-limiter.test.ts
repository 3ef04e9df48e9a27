import { describe, expect, it } from 'vitest';
import { createHardLimiter } from '../../bench/lib/hard-limiter.js';
import { defaultTiers } from '../../lib/policy/defaults.js';
import { LAB_EPOCH, worldPolicy, type World } from '../../bench/lib/world.js';

const world = (accounts: World['accounts']): World => ({
  name: 't',
  trace: [],
  accounts,
  tiers: defaultTiers,
  defaults: {
    accountModel: { rpm: 3, tpm: 1_000_000, rate: 10, burst: 50 },
    tenantModel: { rpm: 5, tpm: 1_000_000 },
    tenant: { rpm: 100, tpm: 1_000_000 },
  },
  gpu: { slots: 1 },
});
const body = { model: 'sim-llm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };

describe("the baselines' hard limiter", () => {
  it("checks the policy's windows: account x model, then tenant x model; 429 with Retry-After to the window's end", () => {
    const policy = worldPolicy(world({ a: { tenant: 'x', tier: 'realtime' }, b: { tenant: 'x', tier: 'realtime' } }));
    const limiter = createHardLimiter(policy);
    const at = LAB_EPOCH + 15_000;
    const results = Array.from({ length: 4 }, () => limiter.check('a', 'sim-llm', body, at));
    expect(results.map((r) => r.ok)).toEqual([true, true, true, false]);
    expect(results[3]).toEqual({ ok: false, reason: 'limit:account-model:requests', retryAfterSec: 45 });
    // The tenant's window holds 5: account b gets the 2 left.
    expect([1, 2, 3].map(() => limiter.check('b', 'sim-llm', body, at).ok)).toEqual([true, true, false]);
    expect(limiter.check('b', 'sim-llm', body, at)).toMatchObject({ reason: 'limit:tenant-model:requests' });
    // A new window, a new count; a refused request consumed nothing.
    expect(limiter.check('a', 'sim-llm', body, LAB_EPOCH + 60_000).ok).toBe(true);
  });

  it("holds a degrade tier's account to its hard cap (hardCapFactor x quota), as Sluice does", () => {
    const policy = worldPolicy(world({ bot: { tenant: 'etl', tier: 'offline', limits: { rpm: 1 } } }));
    const limiter = createHardLimiter(policy);
    const passed = Array.from({ length: 5 }, () => limiter.check('bot', 'sim-llm', body, LAB_EPOCH).ok).filter(
      Boolean,
    ).length;
    expect(passed).toBe(policy.tiers.offline!.hardCapFactor);
  });

  it('refuses an account the policy does not know, without throwing', () => {
    const limiter = createHardLimiter(worldPolicy(world({ a: { tenant: 'x', tier: 'realtime' } })));
    expect(limiter.check('__proto__', 'sim-llm', body, LAB_EPOCH)).toMatchObject({
      ok: false,
      reason: 'limit:unknown-account',
    });
  });
});
