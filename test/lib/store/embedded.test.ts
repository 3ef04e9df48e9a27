import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { reservoirKey, reservoirPlace, slotGateKey, windowKey } from '../../../lib/store/keys.js';
import type { WindowLimit } from '../../../lib/store/types.js';

const acct: WindowLimit = {
  key: windowKey({ kind: 'account-model', tenant: 't1', account: 'a1', model: 'm' }, 'requests', 60_000),
  scope: 'account-model',
  unit: 'requests',
  limit: 2,
  windowMs: 60_000,
  cost: 1,
};
const tokens: WindowLimit = {
  key: windowKey({ kind: 'tenant', tenant: 't1' }, 'tokens', 60_000),
  scope: 'tenant',
  unit: 'tokens',
  limit: 1000,
  windowMs: 60_000,
  cost: 400,
};

describe('embedded RateStore', () => {
  it('admits until a window is full, charging every window together', async () => {
    const clock = new VirtualClock(1_000);
    const store = createEmbeddedStore(clock);
    const a = await store.admit({ limits: [acct, tokens] });
    expect(a.allowed).toBe(true);
    expect(a.windows.map((w) => w.remaining)).toEqual([1, 600]);
    const b = await store.admit({ limits: [acct, tokens] });
    expect(b.windows.map((w) => w.remaining)).toEqual([0, 200]);
    const c = await store.admit({ limits: [acct, { ...tokens, cost: 100 }] });
    expect(c.allowed).toBe(false);
    if (!c.allowed) {
      expect(c.deniedBy).toEqual({ scope: 'account-model', unit: 'requests' });
      expect(c.retryAfterMs).toBe(59_000);
    }
    // The refusal charged no tokens.
    const d = await store.admit({ limits: [{ ...tokens, cost: 200 }] });
    expect(d.allowed).toBe(true);
  });

  it('reconciles tokens into the window they were charged in', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const a = await store.admit({ limits: [tokens] });
    await store.admit({ limits: [tokens] });
    // Both used 100 tokens, not 400: give 600 back, so 800 fit again.
    await store.reconcile([{ key: tokens.key, windowStart: a.windows[0]!.windowStart, delta: -600 }]);
    expect((await store.admit({ limits: [{ ...tokens, cost: 800 }] })).allowed).toBe(true);
    // A correction for a window that has ended does not leak into the next one.
    await clock.advance(60_000);
    await store.reconcile([{ key: tokens.key, windowStart: 0, delta: 900 }]);
    expect((await store.admit({ limits: [{ ...tokens, cost: 1000 }] })).allowed).toBe(true);
  });

  it('the reservoir refuses once full and frees places as requests leave', async () => {
    const store = createEmbeddedStore(new VirtualClock(0));
    const key = reservoirKey('t1', 'batch.t1.m');
    const reservoir = (member: string) => ({ key, max: 2, member, holdMs: 60_000 });
    expect((await store.admit({ limits: [], reservoir: reservoir('a') })).queued).toBe(1);
    expect((await store.admit({ limits: [], reservoir: reservoir('b') })).queued).toBe(2);
    const full = await store.admit({ limits: [], reservoir: reservoir('c') });
    expect(full.allowed).toBe(false);
    if (!full.allowed) expect(full.deniedBy).toEqual({ scope: 'reservoir' });
    await store.leaveReservoir(reservoirPlace(key, 'a'));
    expect((await store.admit({ limits: [], reservoir: reservoir('c') })).allowed).toBe(true);
  });

  it('paces per key and records only releases', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const p = { key: 'k', rate: 10, burst: 1 };
    expect(await store.pace(p)).toBe(0);
    expect(await store.pace(p)).toBe(100);
    expect(await store.pace(p)).toBe(100);
    expect(await store.pace({ ...p, key: 'other' })).toBe(0);
    await clock.advance(100);
    expect(await store.pace(p)).toBe(0);
  });

  it('slot leases bound concurrency and expire when not released', async () => {
    const clock = new VirtualClock(0);
    const store = createEmbeddedStore(clock);
    const gate = {
      key: slotGateKey('m'),
      capacity: 2,
      tiers: { realtime: { reserved: 1, lendable: 0 }, batch: { reserved: 1, lendable: 0 } },
      leaseMs: 5_000,
    };
    expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'a' })).granted).toBe(true);
    // batch may not borrow realtime's slot (lendable 0) ...
    expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'b' })).granted).toBe(false);
    // ... which realtime still gets.
    expect((await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'c' })).granted).toBe(true);
    await store.releaseSlot(gate.key, 'a');
    expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'd' })).granted).toBe(true);
    // A crashed holder's lease (c, d never released) frees itself.
    await clock.advance(5_000);
    const after = await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'e' });
    expect(after.granted).toBe(true);
    expect(after.inUse).toEqual({ batch: 1 });
  });
});
