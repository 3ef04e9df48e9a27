import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { admit, degradeFactor } from '../../../lib/admission/admit.js';
import { parsePolicy, type PolicyInput } from '../../../lib/policy/schema.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { basePolicy } from '../policy/fixtures.js';

function setup(edit: (p: PolicyInput) => void = () => {}) {
  const raw = basePolicy();
  edit(raw);
  const policy = parsePolicy(raw);
  const clock = new VirtualClock(1_000);
  const store = createEmbeddedStore(clock);
  const as = (id: string) => ({ id, account: policy.accounts[id]! });
  return { policy, clock, store, as };
}

describe('degrade', () => {
  it('halves the pace at each doubling past the soft quota, up to the step limit', () => {
    expect(degradeFactor(10, 10, 4)).toBe(1);
    expect(degradeFactor(10, 11, 4)).toBe(0.5);
    expect(degradeFactor(10, 20, 4)).toBe(0.5);
    expect(degradeFactor(10, 21, 4)).toBe(0.25);
    expect(degradeFactor(10, 1000, 4)).toBe(1 / 16);
    expect(degradeFactor(10, 1000, 2)).toBe(0.25);
  });

  it('a batch account over its soft quota is admitted and slowed, then refused only at the hard cap', async () => {
    const { policy, store, as } = setup((p) => {
      p.accounts.svc1!.limits = { rpm: 4 };
    });
    const outcomes = [];
    for (let i = 0; i < 14; i++) {
      const a = await admit(store, policy, { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 1_000 });
      outcomes.push(a.outcome === 'admit' ? a.paceFactor : 'reject');
    }
    // 4 at full pace, 4 more at 1/2, the next 4 at 1/4 (hard cap = 3 x 4 = 12), then 429.
    expect(outcomes).toEqual([1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 'reject', 'reject']);
  });

  it('a realtime account is refused at its limit: realtime is never slowed', async () => {
    const { policy, store, as } = setup((p) => {
      p.accounts.rt!.limits = { rpm: 2 };
    });
    const outcomes = [];
    for (let i = 0; i < 3; i++)
      outcomes.push((await admit(store, policy, { account: as('rt'), model: 'm', tokenEstimate: 1, now: 0 })).outcome);
    expect(outcomes).toEqual(['admit', 'admit', 'reject']);
  });
});

describe('booked bursts at admission', () => {
  it('raise the tenant’s limits and reservoir only while active', async () => {
    const { policy, store, as } = setup((p) => {
      p.tenants.acme = { limits: { rpm: 2 } };
      p.reservations = [
        { id: 'r', tenant: 'acme', startsAt: 10_000, endsAt: 20_000, extra: { rpm: 3, tpm: 0, reservoir: 0 } },
      ];
    });
    const run = async (now: number, n: number) => {
      const out = [];
      for (let i = 0; i < n; i++)
        out.push((await admit(store, policy, { account: as('rt'), model: 'm', tokenEstimate: 1, now })).outcome);
      return out;
    };
    // Before the window: the tenant's own 2 per minute.
    expect(await run(1_000, 3)).toEqual(['admit', 'admit', 'reject']);
    // Inside it (same minute window): 2 + 3 = 5 in all, so 3 more.
    expect(await run(10_000, 4)).toEqual(['admit', 'admit', 'admit', 'reject']);
  });
});

describe('pause', () => {
  it('refuses a paused tenant or account with a clear reason', async () => {
    const { policy, store, as } = setup((p) => {
      p.tenants.beta = { paused: true };
      p.accounts.svc1!.paused = true;
    });
    const t = await admit(store, policy, { account: as('b'), model: 'm', tokenEstimate: 1, now: 0 });
    expect(t).toMatchObject({ outcome: 'reject', reason: 'tenant-paused' });
    const a = await admit(store, policy, { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 0 });
    expect(a).toMatchObject({ outcome: 'reject', reason: 'account-paused' });
    expect((await admit(store, policy, { account: as('rt'), model: 'm', tokenEstimate: 1, now: 0 })).outcome).toBe(
      'admit',
    );
  });
});

describe('reservoir', () => {
  it('defaults to what the pace releases within the tier’s maximum wait, unless set', async () => {
    const { reservoirSize } = await import('../../../lib/admission/admit.js');
    const { policy, as } = setup();
    // 10/s: realtime waits at most 10 s, batch 5 min.
    expect(reservoirSize(policy, { account: as('rt'), model: 'm', tokenEstimate: 1, now: 0 })).toBe(100);
    expect(reservoirSize(policy, { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 0 })).toBe(3_000);
    const set = setup((p) => {
      p.accounts.rt!.limits = { reservoir: 7 };
    });
    expect(reservoirSize(set.policy, { account: set.as('rt'), model: 'm', tokenEstimate: 1, now: 0 })).toBe(7);
  });
});

describe('fair share at admission', () => {
  const shareOf = (cap: number, rate: number) => ({ share: async () => ({ cap, rate }) });

  it('refuses what its LiteTopic holds past the level of an over-committed tier, with the rounds to wait', async () => {
    const { policy, store, as } = setup();
    const request = { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 1_000 };
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await admit(store, policy, request, shareOf(3, 0.5)));
    expect(outcomes.map((o) => o.outcome)).toEqual(['admit', 'admit', 'admit', 'reject']);
    expect(outcomes[3]).toMatchObject({ reason: 'fair-share', retryAfterMs: 2_000 });
    expect(outcomes[3]!.outcome === 'reject' && outcomes[3]!.message).toMatch(/starts about 30 per minute/);
    // Without a report the LiteTopic holds what its pace releases within the wait, as before.
    expect((await admit(store, policy, request)).outcome).toBe('admit');
  });

  it('a level above the pace bound changes nothing: the reservoir refuses as before', async () => {
    const { policy, store, as } = setup((p) => {
      p.accounts.svc1!.limits = { reservoir: 2 };
    });
    const request = { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 1_000 };
    for (let i = 0; i < 2; i++) await admit(store, policy, request, shareOf(50, 1));
    expect(await admit(store, policy, request, shareOf(50, 1))).toMatchObject({
      outcome: 'reject',
      reason: 'reservoir',
    });
  });

  it('a tier with fairShareAtAdmission false is not capped by the level', async () => {
    const { policy, store, as } = setup((p) => {
      p.tiers.batch!.fairShareAtAdmission = false;
    });
    const request = { account: as('svc1'), model: 'm', tokenEstimate: 1, now: 1_000 };
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await admit(store, policy, request, shareOf(1, 1))).outcome);
    expect(outcomes).toEqual(['admit', 'admit', 'admit']);
  });
});
