/**
 * One suite for every RateStore: the embedded store and the Lua twins over TCP
 * and over Upstash REST must give the same decisions on the same inputs.
 *
 * Three parts:
 * - the embedded store's cases (test/lib/store/embedded.test.ts) and more,
 *   on a virtual clock passed to the store (the Redis stores then use it
 *   instead of Redis TIME), so every case is exact and instant;
 * - property-based runs: random operation sequences on a virtual clock, each
 *   step answered by the store under test and by the embedded reference, which
 *   must agree step by step;
 * - a few real-time cases, where the Redis stores read Redis TIME.
 *
 * Every case uses fresh tenant and key names, so stores that share one Redis
 * need no cleanup between cases.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { DEFAULT_RECLAIM_MS } from '../../../lib/limits/capacity-gate.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import {
  liteTopicReturnKey,
  returnScheduleKey,
  paceKey,
  reservoirKey,
  reservoirPlace,
  slotGateKey,
  windowKey,
} from '../../../lib/store/keys.js';
import { runAggregateConformance } from './aggregate-conformance.js';
import type { RateStore, Reconciliation, SlotRequest, Unit, WindowLimit } from '../../../lib/store/types.js';

/** Builds a store on the given clock; for the Redis stores, `undefined` means Redis TIME. */
export type StoreFactory = (clock: Clock | undefined) => Promise<RateStore>;

const wallClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const h = setTimeout(fn, ms);
    return () => clearTimeout(h);
  },
};

const uid = () => randomUUID().slice(0, 8);
/** A send-back in a return schedule of its own, which books nothing. */
const lone = () => ({ scheduleKey: returnScheduleKey('m', uid()), placeMs: 0 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function limitFor(
  tenant: string,
  scope: 'account-model' | 'tenant-model' | 'tenant',
  unit: Unit,
  limit: number,
  windowMs: number,
  cost: number,
): WindowLimit {
  const ws =
    scope === 'account-model'
      ? ({ kind: scope, tenant, account: 'a1', model: 'm' } as const)
      : scope === 'tenant-model'
        ? ({ kind: scope, tenant, model: 'm' } as const)
        : ({ kind: scope, tenant } as const);
  return { key: windowKey(ws, unit, windowMs), scope, unit, limit, windowMs, cost };
}

/** Waits until the current wall-clock window has at least `needMs` left, so a real-time case cannot straddle a reset. */
async function roomInWindow(windowMs: number, needMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < needMs) await sleep(left + 5);
}

/** `announces`: whether the store tells watchers of slot releases (not Upstash REST: no subscriptions). */
export function runRateStoreConformance(name: string, makeStore: StoreFactory, announces = true): void {
  describe(`RateStore conformance: ${name}`, () => {
    const opened: RateStore[] = [];
    const open = async (clock: Clock | undefined) => {
      const store = await makeStore(clock);
      opened.push(store);
      return store;
    };
    afterAll(async () => {
      await Promise.all(opened.map((s) => s.close()));
    });

    runAggregateConformance(open);

    describe('virtual clock', () => {
      it('admits until a window is full, charging every window together', async () => {
        const clock = new VirtualClock(1_000);
        const store = await open(clock);
        const t = `t-${uid()}`;
        const acct = limitFor(t, 'account-model', 'requests', 2, 60_000, 1);
        const tokens = limitFor(t, 'tenant', 'tokens', 1000, 60_000, 400);
        const a = await store.admit({ limits: [acct, tokens] });
        expect(a.allowed).toBe(true);
        expect(a.windows.map((w) => w.remaining)).toEqual([1, 600]);
        expect(a.windows[0]).toMatchObject({
          scope: 'account-model',
          unit: 'requests',
          limit: 2,
          windowStart: 0,
          resetMs: 59_000,
        });
        const b = await store.admit({ limits: [acct, tokens] });
        expect(b.windows.map((w) => w.remaining)).toEqual([0, 200]);
        const c = await store.admit({ limits: [acct, { ...tokens, cost: 100 }] });
        expect(c.allowed).toBe(false);
        if (!c.allowed) {
          expect(c.deniedBy).toEqual({ scope: 'account-model', unit: 'requests' });
          expect(c.retryAfterMs).toBe(59_000);
          // A refusal reports the windows unchanged.
          expect(c.windows.map((w) => w.remaining)).toEqual([0, 200]);
        }
        // The refusal charged no tokens.
        expect((await store.admit({ limits: [{ ...tokens, cost: 200 }] })).allowed).toBe(true);
      });

      it('names the first refusing limit and waits for the latest reset among the refusing ones', async () => {
        const clock = new VirtualClock(10_500);
        const store = await open(clock);
        const t = `t-${uid()}`;
        const perSecond = limitFor(t, 'tenant-model', 'requests', 1, 1_000, 1);
        const perMinute = limitFor(t, 'tenant', 'tokens', 100, 60_000, 60);
        expect((await store.admit({ limits: [perSecond, perMinute] })).allowed).toBe(true);
        const d = await store.admit({ limits: [perSecond, perMinute] });
        expect(d.allowed).toBe(false);
        if (!d.allowed) {
          expect(d.deniedBy).toEqual({ scope: 'tenant-model', unit: 'requests' });
          expect(d.retryAfterMs).toBe(49_500);
        }
        await clock.advance(500);
        const e = await store.admit({ limits: [perSecond, perMinute] });
        expect(e.allowed).toBe(false);
        if (!e.allowed) {
          expect(e.deniedBy).toEqual({ scope: 'tenant', unit: 'tokens' });
          expect(e.retryAfterMs).toBe(49_000);
        }
        await clock.advance(49_000);
        expect((await store.admit({ limits: [perSecond, perMinute] })).allowed).toBe(true);
      });

      it('starts a fresh count when the window rolls over', async () => {
        const clock = new VirtualClock(59_999);
        const store = await open(clock);
        const l = limitFor(`t-${uid()}`, 'tenant', 'requests', 1, 60_000, 1);
        expect((await store.admit({ limits: [l] })).allowed).toBe(true);
        const refused = await store.admit({ limits: [l] });
        expect(refused.allowed).toBe(false);
        if (!refused.allowed) expect(refused.retryAfterMs).toBe(1);
        await clock.advance(1);
        const next = await store.admit({ limits: [l] });
        expect(next.allowed).toBe(true);
        expect(next.windows[0]).toMatchObject({ windowStart: 60_000, resetMs: 60_000, remaining: 0 });
      });

      it('refuses a cost larger than the limit outright, and admits a zero cost at the limit', async () => {
        const store = await open(new VirtualClock(0));
        const l = limitFor(`t-${uid()}`, 'tenant', 'tokens', 100, 60_000, 101);
        expect((await store.admit({ limits: [l] })).allowed).toBe(false);
        expect((await store.admit({ limits: [{ ...l, cost: 100 }] })).allowed).toBe(true);
        expect((await store.admit({ limits: [{ ...l, cost: 0 }] })).allowed).toBe(true);
        expect((await store.admit({ limits: [{ ...l, cost: 1 }] })).allowed).toBe(false);
      });

      it('reconciles tokens into the window they were charged in', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const tokens = limitFor(`t-${uid()}`, 'tenant', 'tokens', 1000, 60_000, 400);
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

      it('reconciles several windows at once, never below zero, and ignores unknown keys', async () => {
        const store = await open(new VirtualClock(0));
        const t = `t-${uid()}`;
        const a = limitFor(t, 'tenant-model', 'tokens', 100, 60_000, 50);
        const b = limitFor(t, 'tenant', 'tokens', 100, 60_000, 50);
        await store.admit({ limits: [a, b] });
        const items: Reconciliation[] = [
          { key: a.key, windowStart: 0, delta: 30 },
          { key: b.key, windowStart: 0, delta: -500 },
          { key: `${b.key}:none`, windowStart: 0, delta: 5 },
        ];
        await store.reconcile(items);
        const probe = await store.admit({
          limits: [
            { ...a, cost: 0 },
            { ...b, cost: 0 },
          ],
        });
        expect(probe.windows.map((w) => w.remaining)).toEqual([20, 100]);
        await store.reconcile([]);
      });

      it('the reservoir refuses once full and frees places as requests leave', async () => {
        const store = await open(new VirtualClock(0));
        const t = `t-${uid()}`;
        const key = reservoirKey(t, `batch.${t}.m`);
        const place = (member: string) => ({ key, max: 2, member, holdMs: 60_000 });
        expect((await store.admit({ limits: [], reservoir: place('r1') })).queued).toBe(1);
        expect((await store.admit({ limits: [], reservoir: place('r2') })).queued).toBe(2);
        const full = await store.admit({ limits: [], reservoir: place('r3') });
        expect(full.allowed).toBe(false);
        if (!full.allowed) {
          expect(full.deniedBy).toEqual({ scope: 'reservoir' });
          expect(full.retryAfterMs).toBe(1000);
          expect(full.queued).toBe(2);
        }
        await store.leaveReservoir(reservoirPlace(key, 'r1'));
        expect((await store.admit({ limits: [], reservoir: place('r3') })).allowed).toBe(true);
        // Leaving more often than entering does not bank places; a stranger's place is not ours to give back.
        for (let i = 0; i < 5; i++) await store.leaveReservoir(reservoirPlace(key, 'r1'));
        await store.leaveReservoir(reservoirPlace(key, 'nobody'));
        await store.leaveReservoir(key);
        expect((await store.admit({ limits: [], reservoir: place('r4') })).allowed).toBe(false);
        await store.leaveReservoir(reservoirPlace(key, 'r2'));
        await store.leaveReservoir(reservoirPlace(key, 'r3'));
        expect((await store.admit({ limits: [], reservoir: place('r4') })).queued).toBe(1);
      });

      it('a reservoir place lapses with its request, so a lost release heals itself', async () => {
        const clock = new VirtualClock(5_000);
        const store = await open(clock);
        const t = `t-${uid()}`;
        const key = reservoirKey(t, `rt.${t}.m`);
        const place = (member: string, holdMs: number) => ({ key, max: 2, member, holdMs });
        expect((await store.admit({ limits: [], reservoir: place('short', 1_000) })).queued).toBe(1);
        expect((await store.admit({ limits: [], reservoir: place('long', 10_000) })).queued).toBe(2);
        // Nobody releases 'short' (its release was lost): it holds its place until its hold ends.
        await clock.advance(999);
        expect((await store.admit({ limits: [], reservoir: place('x', 10_000) })).allowed).toBe(false);
        await clock.advance(1);
        const healed = await store.admit({ limits: [], reservoir: place('x', 10_000) });
        expect(healed.allowed).toBe(true);
        expect(healed.queued).toBe(2);
        // Admitting the same request again holds one place, not two.
        await store.leaveReservoir(reservoirPlace(key, 'x'));
        expect((await store.admit({ limits: [], reservoir: place('long', 10_000) })).queued).toBe(1);
        // At rest, once every hold has ended, the reservoir is empty.
        await clock.advance(10_000);
        const refusedAll = await store.admit({
          limits: [limitFor(t, 'tenant', 'requests', 0, 60_000, 1)],
          reservoir: place('y', 1),
        });
        expect(refusedAll.allowed).toBe(false);
        expect(refusedAll.queued).toBe(0);
        // A release after the place lapsed changes nothing.
        await store.leaveReservoir(reservoirPlace(key, 'short'));
        expect((await store.admit({ limits: [], reservoir: place('z', 1_000) })).queued).toBe(1);
      });

      it('a full reservoir charges no window, and a refusing window takes no reservoir place', async () => {
        const store = await open(new VirtualClock(0));
        const t = `t-${uid()}`;
        const l = limitFor(t, 'tenant', 'requests', 2, 60_000, 1);
        const key = reservoirKey(t, `rt.${t}.m`);
        const place = (member: string) => ({ key, max: 1, member, holdMs: 60_000 });
        expect((await store.admit({ limits: [l], reservoir: place('a') })).allowed).toBe(true);
        const full = await store.admit({ limits: [l], reservoir: place('b') });
        expect(full.allowed).toBe(false);
        expect(full.windows[0]!.remaining).toBe(1);
        await store.leaveReservoir(reservoirPlace(key, 'a'));
        expect((await store.admit({ limits: [l], reservoir: place('b') })).queued).toBe(1);
        await store.leaveReservoir(reservoirPlace(key, 'b'));
        const capped = await store.admit({ limits: [l], reservoir: place('c') });
        expect(capped.allowed).toBe(false);
        if (!capped.allowed) expect(capped.deniedBy).toEqual({ scope: 'tenant', unit: 'requests' });
        expect(capped.queued).toBe(0);
      });

      it('paces per key and records only releases', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const p = { key: paceKey(`t-${uid()}`, 'topic'), rate: 10, burst: 1 };
        expect(await store.pace(p)).toBe(0);
        expect(await store.pace(p)).toBe(100);
        expect(await store.pace(p)).toBe(100);
        expect(await store.pace({ ...p, key: `${p.key}-other` })).toBe(0);
        await clock.advance(100);
        expect(await store.pace(p)).toBe(0);
      });

      it("reservoirDepth reads a LiteTopic's live reservoir places, and sweeps none", async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const t = `t-${uid()}`;
        const key = reservoirKey(t, `batch.${t}.m`);
        expect(await store.reservoirDepth(key)).toBe(0);
        await store.admit({ limits: [], reservoir: { key, max: 10, member: 'a', holdMs: 1_000 } });
        await store.admit({ limits: [], reservoir: { key, max: 10, member: 'b', holdMs: 5_000 } });
        expect(await store.reservoirDepth(key)).toBe(2);
        await clock.advance(1_000);
        // 'a' lapsed just now: not counted, though nothing swept it.
        expect(await store.reservoirDepth(key)).toBe(1);
        await store.leaveReservoir(reservoirPlace(key, 'b'));
        expect(await store.reservoirDepth(key)).toBe(0);
      });

      it('reservoirPlaces lists the live places, first to lapse first; shedReservoir takes them, each once', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const t = `t-${uid()}`;
        const key = reservoirKey(t, `batch.${t}.m`);
        expect(await store.reservoirPlaces(key, 10)).toEqual([]);
        expect(await store.shedReservoir(key, ['a'])).toEqual([]);
        await store.admit({ limits: [], reservoir: { key, max: 10, member: 'lapsing', holdMs: 500 } });
        for (const [i, member] of ['e', 'a', 'd', 'c'].entries()) {
          await store.admit({ limits: [], reservoir: { key, max: 10, member, holdMs: 1_000 + 100 * i } });
        }
        // Ties lapse at one time: ordered by member, as Redis orders them.
        await store.admit({ limits: [], reservoir: { key, max: 10, member: 'b', holdMs: 1_300 } });
        await clock.advance(500);
        // 'lapsing' lapsed just now: not listed.
        expect(await store.reservoirPlaces(key, 10)).toEqual([
          { member: 'e', lapsesAt: 1_000 },
          { member: 'a', lapsesAt: 1_100 },
          { member: 'd', lapsesAt: 1_200 },
          { member: 'b', lapsesAt: 1_300 },
          { member: 'c', lapsesAt: 1_300 },
        ]);
        expect((await store.reservoirPlaces(key, 2)).map((p) => p.member)).toEqual(['e', 'a']);
        expect(await store.reservoirPlaces(key, 0)).toEqual([]);
        // Taken once: a second caller gets none of them, and members not there are skipped.
        expect(await store.shedReservoir(key, ['d', 'c', 'zz'])).toEqual(['d', 'c']);
        expect(await store.shedReservoir(key, ['c', 'd'])).toEqual([]);
        expect(await store.reservoirDepth(key)).toBe(3);
        // A place taken is given back: it counts against the reservoir no more.
        const admitted = await store.admit({ limits: [], reservoir: { key, max: 4, member: 'f', holdMs: 1_000 } });
        expect(admitted.allowed).toBe(true);
        expect(await store.shedReservoir(key, ['e', 'a', 'b', 'f'])).toEqual(['e', 'a', 'b', 'f']);
        expect(await store.reservoirDepth(key)).toBe(0);
      });

      it('books release slots ahead when asked, each its own, and only up to the horizon', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const p = { key: paceKey(`t-${uid()}`, 'booked'), rate: 10, burst: 1, reserveUpToMs: 250 };
        expect(await store.paceReserving(p)).toEqual({ waitMs: 0, reserved: false });
        expect(await store.paceReserving(p)).toEqual({ waitMs: 100, reserved: true });
        expect(await store.paceReserving(p)).toEqual({ waitMs: 200, reserved: true });
        // The next slot is 300 ms away, past the horizon: advice only, nothing booked.
        expect(await store.paceReserving(p)).toEqual({ waitMs: 300, reserved: false });
        expect(await store.pace(p)).toBe(300);
        await clock.advance(300);
        expect(await store.pace(p)).toBe(0);
      });

      it('paces a burst of 50 at 10/s (the second seed), with fractional intervals exact', async () => {
        const clock = new VirtualClock(5_000);
        const store = await open(clock);
        const p = { key: paceKey(`t-${uid()}`, 'burst'), rate: 10, burst: 50 };
        let released = 0;
        for (let i = 0; i < 55; i++) if ((await store.pace(p)) === 0) released++;
        expect(released).toBe(50);
        expect(await store.pace(p)).toBe(100);
        const third = { key: paceKey(`t-${uid()}`, 'thirds'), rate: 3, burst: 1 };
        const waits: number[] = [];
        for (let i = 0; i < 4; i++) {
          const w = await store.pace(third);
          waits.push(w);
          await clock.advance(w);
          if (w > 0) expect(await store.pace(third)).toBe(0);
        }
        // 333.33… ms intervals: waits round up to whole milliseconds.
        expect(waits).toEqual([0, 334, 334, 334]);
      });

      it("a send-back returns with its LiteTopic's pending return, and books its own once that is near or past", async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const key = liteTopicReturnKey('m', `lt-${uid()}`);
        const other = liteTopicReturnKey('m', `lt-${uid()}`);
        // Each in a schedule of its own: this case is about the LiteTopic's return.
        const back = (k: string, ms: number) =>
          store.sendBack({ ...lone(), key: k, ms, minMs: 50, maxMs: 60_000, boundMs: 60_000 });
        expect(await back(key, 1_000)).toBe(1_000);
        await clock.advance(300);
        // Another message of the LiteTopic: the broker keeps one pause, so it comes back with the first.
        expect(await back(key, 5_000)).toBe(700);
        expect(await back(other, 5_000)).toBe(5_000);
        await clock.advance(660);
        // 40 ms left, under the shortest Suspend: the LiteTopic may be back already; this one books its own.
        expect(await back(key, 2_000)).toBe(2_000);
        await clock.advance(1_000);
        expect(await back(key, 100)).toBe(1_000);
        await clock.advance(1_000);
        // Past: whole ms, never under the shortest Suspend.
        expect(await back(key, 10.2)).toBe(50);
        await clock.advance(50);
        expect(await back(key, 123.4)).toBe(124);
      });

      it('a send-back never returns after its deadline, and one due before the pending return brings it forward', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const key = liteTopicReturnKey('m', `lt-${uid()}`);
        const back = (ms: number, maxMs: number) =>
          store.sendBack({ ...lone(), key, ms, minMs: 50, maxMs, boundMs: 60_000 });
        expect(await back(5_000, 3_000.5)).toBe(3_001);
        await clock.advance(1_000);
        // Due in 800 ms, before the LiteTopic's return at 3,001: its Suspend replaces the pause, so the
        // LiteTopic is back at 1,800, and a message sent back after it joins that.
        expect(await back(4_000, 800)).toBe(800);
        await clock.advance(100);
        expect(await back(4_000, 60_000)).toBe(700);
        // A deadline already past: the shortest Suspend, and the LiteTopic is back then.
        expect(await back(4_000, -20)).toBe(50);
        expect(await back(4_000, 60_000)).toBe(50);
      });

      it('send-backs of a tier return placeMs apart in one schedule, one held to the bound outside it, and a joined one still books its place', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const model = `m-${uid()}`;
        const batch = returnScheduleKey(model, 'batch');
        const back = (liteTopic: string, ms: number, scheduleKey = batch) =>
          store.sendBack({
            key: liteTopicReturnKey(model, liteTopic),
            scheduleKey,
            ms,
            placeMs: 300,
            minMs: 50,
            maxMs: 60_000,
            boundMs: 5_000,
          });
        expect(await back('a', 1_000)).toBe(1_000);
        // The room would have room sooner, but the place after a's is 300 ms later.
        expect(await back('b', 500)).toBe(1_300);
        expect(await back('c', 2_000)).toBe(2_000);
        expect(await back('d', 100)).toBe(2_300);
        // Held to the bound: it books no place, so the next one is not pushed past the bound too.
        expect(await back('e', 6_000)).toBe(5_000);
        expect(await back('f', 100)).toBe(2_600);
        // Joins a's return, and books the place after f's all the same.
        expect(await back('a', 100)).toBe(1_000);
        expect(await back('g', 100)).toBe(3_200);
        // Another tier keeps its own schedule.
        expect(await back('h', 100, returnScheduleKey(model, 'offline'))).toBe(100);
        // A schedule whose places are past starts from the room's own time again.
        await clock.advance(10_000);
        expect(await back('i', 400)).toBe(400);
      });

      it('slot leases bound concurrency and expire when not released', async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 2,
          tiers: { realtime: { reserved: 1, lendable: 0 }, batch: { reserved: 1, lendable: 0 } },
          leaseMs: 5_000,
        };
        expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'a' })).granted).toBe(true);
        const refused = await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'b' });
        expect(refused).toEqual({ granted: false, inUse: { batch: 1 }, retryAfterMs: 100 });
        expect(await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'c' })).toEqual({
          granted: true,
          inUse: { batch: 1, realtime: 1 },
        });
        await store.releaseSlot(gate.key, 'a');
        expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'd' })).granted).toBe(true);
        await clock.advance(4_950);
        const soon = await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'x' });
        expect(soon).toEqual({ granted: false, inUse: { batch: 1, realtime: 1 }, retryAfterMs: 50 });
        // A crashed holder's lease (c, d never released) frees itself.
        await clock.advance(50);
        const after = await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'e' });
        expect(after).toEqual({ granted: true, inUse: { batch: 1 } });
      });

      it('lends idle reserved slots only as far as the lender allows, and tiers outside the spec only borrow', async () => {
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 10,
          tiers: { realtime: { reserved: 6, lendable: 3 }, batch: { reserved: 3, lendable: 1 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string) => store.acquireSlot({ ...gate, tier, leaseId: id });
        const granted: boolean[] = [];
        for (let i = 0; i < 9; i++) granted.push((await take('batch', `b${i}`)).granted);
        // 3 own + 1 unreserved + 3 lent by realtime = 7.
        expect(granted.filter(Boolean)).toHaveLength(7);
        for (let i = 0; i < 3; i++) expect((await take('realtime', `r${i}`)).granted).toBe(true);
        await store.releaseSlot(gate.key, 'b0');
        // A tier outside the spec owns nothing but may borrow what is lent...
        expect(await take('offline', 'o1')).toEqual({ granted: true, inUse: { batch: 6, realtime: 3, offline: 1 } });
        const last = await take('realtime', 'r3');
        expect(last).toEqual({ granted: false, inUse: { batch: 6, realtime: 3, offline: 1 }, retryAfterMs: 100 });
        await store.releaseSlot(gate.key, 'o1');
        // ...and once realtime was refused below its reservation, it takes that back first.
        expect((await take('offline', 'o2')).granted).toBe(false);
        expect((await take('realtime', 'r4')).granted).toBe(true);
        expect((await take('offline', 'o3')).granted).toBe(false);
      });

      it("keeps a lender's headroom against what it holds now, not what the asker last saw", async () => {
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 8,
          tiers: { realtime: { reserved: 4, lendable: 4 }, batch: { reserved: 4, lendable: 4 } },
          leaseMs: 60_000,
        };
        const keeping = { ...gate, tiers: { ...gate.tiers, realtime: { reserved: 4, lendable: 4, keep: 1 } } };
        const take = (spec: typeof gate, tier: string, id: string) => store.acquireSlot({ ...spec, tier, leaseId: id });
        for (let i = 0; i < 4; i++) expect((await take(keeping, 'batch', `b${i}`)).granted).toBe(true);
        // Realtime holds none: it lends 3 of its 4 idle slots and keeps one.
        for (let i = 4; i < 7; i++) expect((await take(keeping, 'batch', `b${i}`)).granted).toBe(true);
        expect(await take(keeping, 'batch', 'b7')).toEqual({ granted: false, inUse: { batch: 7 }, retryAfterMs: 100 });
        // Realtime takes its headroom (another dispatcher, say) and a borrowed call ends: the asker's last view
        // (batch 7, realtime 0) would lend that slot; realtime, holding one now, keeps it as its new headroom.
        expect((await take(gate, 'realtime', 'r0')).granted).toBe(true);
        await store.releaseSlot(gate.key, 'b6');
        expect((await take(keeping, 'batch', 'b8')).granted).toBe(false);
        // Without a keep, everything idle is lent.
        expect(await take(gate, 'batch', 'b9')).toEqual({ granted: true, inUse: { batch: 7, realtime: 1 } });
      });

      it("lends a lender's headroom too while enough calls in flight, of any asker, are expected to end soon", async () => {
        const clock = new VirtualClock(0);
        const store = await open(clock);
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 8,
          tiers: {
            realtime: { reserved: 4, lendable: 4, keep: 1, keepUnlessEndsWithinMs: 1_000 },
            batch: { reserved: 4, lendable: 4 },
          },
          releasesNear: 2,
          leaseMs: 60_000,
        };
        const take = (id: string, expectedMs?: number) =>
          store.acquireSlot({ ...gate, tier: 'batch', leaseId: id, expectedMs });
        for (let i = 0; i < 4; i++) expect((await take(`b${i}`, 5_000)).granted).toBe(true);
        expect((await take('b4', 500)).granted).toBe(true);
        expect((await take('b5')).granted).toBe(true);
        expect((await take('b6', 5_000)).granted).toBe(true);
        // One call ends within 1 s (b4; b5's length is not known): realtime keeps its last idle slot.
        expect((await take('b7', 5_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b6');
        expect((await take('b8', 700)).granted).toBe(true);
        // Two do now (b4, b8): it is lent.
        expect(await take('b9', 5_000)).toEqual({ granted: true, inUse: { batch: 8 } });
        // Released calls no longer count.
        await store.releaseSlot(gate.key, 'b4');
        await store.releaseSlot(gate.key, 'b8');
        expect((await take('b10', 5_000)).granted).toBe(true);
        expect((await take('b11', 5_000)).granted).toBe(false);
        // Counted from now: b0–b3 end 900 ms from here.
        await clock.advance(4_100);
        expect(await take('b12', 5_000)).toEqual({ granted: true, inUse: { batch: 8 } });
        await store.releaseSlot(gate.key, 'b12');
        // Still near 1 s past their expected end (b0–b3)...
        await clock.advance(1_900);
        expect(await take('b13', 5_000)).toEqual({ granted: true, inUse: { batch: 8 } });
        await store.releaseSlot(gate.key, 'b13');
        // ...but not once further past it: when they end is anyone's guess, and realtime keeps its slot.
        await clock.advance(1);
        expect((await take('b14', 5_000)).granted).toBe(false);
      });

      it('tiers named like Object.prototype members are tiers like any other', async () => {
        // The policy refuses these names, but the store takes a tier from whoever asks (a message's envelope):
        // it must not read Object.prototype for one, as a plain index would (the embedded store did).
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 3,
          tiers: { constructor: { reserved: 1, lendable: 0 }, toString: { reserved: 1, lendable: 0 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string) =>
          store.acquireSlot({ ...gate, tier, leaseId: id, asker: 'd1', deadline: 10_000 });
        expect(await take('constructor', 'c1')).toEqual({ granted: true, inUse: { constructor: 1 } });
        expect((await take('hasOwnProperty', 'h1')).granted).toBe(true);
        // The unreserved slot is gone: constructor is at its reservation, toString still has its own.
        expect((await take('constructor', 'c2')).granted).toBe(false);
        expect(await take('toString', 't1')).toEqual({
          granted: true,
          inUse: { constructor: 1, hasOwnProperty: 1, toString: 1 },
        });
        await store.releaseSlot(gate.key, 'c1');
        expect((await take('valueOf', 'v1')).granted).toBe(false);
        expect((await take('constructor', 'c3')).granted).toBe(true);
      });

      it('a tier refused below its reservation stops others borrowing its idle part until it is back at its reservation', async () => {
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 4,
          tiers: { realtime: { reserved: 2, lendable: 2 }, batch: { reserved: 2, lendable: 0 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string) => store.acquireSlot({ ...gate, tier, leaseId: id });
        for (let i = 0; i < 4; i++) expect((await take('batch', `b${i}`)).granted).toBe(true);
        expect((await take('realtime', 'r0')).granted).toBe(false);
        // A borrowed slot frees and batch asks first: without the mark it would take it again.
        await store.releaseSlot(gate.key, 'b0');
        expect(await take('batch', 'b4')).toEqual({ granted: false, inUse: { batch: 3 }, retryAfterMs: 100 });
        expect(await take('realtime', 'r1')).toEqual({ granted: true, inUse: { batch: 3, realtime: 1 } });
        // Still below its reservation: the mark stays.
        await store.releaseSlot(gate.key, 'b1');
        expect((await take('batch', 'b5')).granted).toBe(false);
        expect(await take('realtime', 'r2')).toEqual({ granted: true, inUse: { batch: 2, realtime: 2 } });
        // Back at its reservation: the mark is gone, realtime's idle part is lent again.
        await store.releaseSlot(gate.key, 'r2');
        expect(await take('batch', 'b6')).toEqual({ granted: true, inUse: { batch: 3, realtime: 1 } });
      });

      it('a grant to an asker with nothing more of the tier waiting clears its mark: the idle share is lent again at once', async () => {
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 4,
          tiers: { realtime: { reserved: 3, lendable: 3 }, batch: { reserved: 1, lendable: 0 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string, moreWaiting?: boolean) =>
          store.acquireSlot({ ...gate, tier, leaseId: id, moreWaiting });
        for (let i = 0; i < 4; i++) expect((await take('batch', `b${i}`)).granted).toBe(true);
        expect((await take('realtime', 'r0')).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b0');
        // Realtime's only waiter takes the slot: its demand is served, though it is below its reservation.
        expect(await take('realtime', 'r1', false)).toEqual({ granted: true, inUse: { batch: 3, realtime: 1 } });
        await store.releaseSlot(gate.key, 'b1');
        expect(await take('batch', 'b4')).toEqual({ granted: true, inUse: { batch: 3, realtime: 1 } });
      });

      it(
        announces
          ? "announces a release to the gate's watchers, not a release of a lease it does not hold"
          : 'cannot announce releases (its waiters keep their bounded keep-alive)',
        async () => {
          const store = await open(new VirtualClock(0));
          const key = slotGateKey(`m-${uid()}`);
          let told = 0;
          const stop = store.watchSlots(key, () => told++);
          await sleep(100);
          expect(
            (await store.acquireSlot({ key, capacity: 1, tiers: {}, tier: 'batch', leaseId: 'a', leaseMs: 60_000 }))
              .granted,
          ).toBe(true);
          await store.releaseSlot(key, 'a');
          await store.releaseSlot(key, 'never-held');
          await sleep(100);
          expect(told).toBe(announces ? 1 : 0);
          stop();
          expect(
            (await store.acquireSlot({ key, capacity: 1, tiers: {}, tier: 'batch', leaseId: 'b', leaseMs: 60_000 }))
              .granted,
          ).toBe(true);
          await store.releaseSlot(key, 'b');
          await sleep(100);
          expect(told).toBe(announces ? 1 : 0);
        },
      );

      it('a reclaim mark lapses reclaimMs after the last refusal that set it', async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 2,
          tiers: { realtime: { reserved: 1, lendable: 1 }, batch: { reserved: 1, lendable: 0 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string, reclaimMs?: number) =>
          store.acquireSlot({ ...gate, tier, leaseId: id, reclaimMs });
        expect((await take('batch', 'b0')).granted).toBe(true);
        expect((await take('batch', 'b1')).granted).toBe(true);
        expect((await take('realtime', 'r0', 1_000)).granted).toBe(false);
        await clock.advance(600);
        // A second refusal extends the mark to 600 + 1000.
        expect((await take('realtime', 'r1', 1_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b0');
        expect((await take('batch', 'b2')).granted).toBe(false);
        await clock.advance(999);
        expect((await take('batch', 'b3')).granted).toBe(false);
        await clock.advance(1);
        expect(await take('batch', 'b4')).toEqual({ granted: true, inUse: { batch: 2 } });
        // Without reclaimMs the default applies.
        await store.releaseSlot(gate.key, 'b1');
        await store.releaseSlot(gate.key, 'b4');
        for (const id of ['b5', 'b6']) expect((await take('batch', id)).granted).toBe(true);
        expect((await take('realtime', 'r2')).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b5');
        await clock.advance(DEFAULT_RECLAIM_MS - 1);
        expect((await take('batch', 'b7')).granted).toBe(false);
        await clock.advance(1);
        expect((await take('batch', 'b8')).granted).toBe(true);
      });

      it("a refused asker's claim keeps the last slot it could take from a later deadline elsewhere, not from an earlier one; the claim ends with its grant, its lapse or its deadline", async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 3,
          tiers: { realtime: { reserved: 3, lendable: 0 } },
          leaseMs: 60_000,
          reclaimMs: 1_000,
        };
        const take = (id: string, asker?: string, deadlineIn?: number) =>
          store.acquireSlot({
            ...gate,
            tier: 'realtime',
            leaseId: id,
            ...(asker ? { asker, deadline: clock.now() + deadlineIn! } : {}),
          });
        for (const id of ['r0', 'r1', 'r2']) expect((await take(id, 'd0', 5_000)).granted).toBe(true);
        // d1's waiter (due in 3 s) is refused: it claims the tier.
        expect((await take('x0', 'd1', 3_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'r0');
        // d0 asks first, for a waiter due later: it may not take d1's waiter's slot, nor may an ask without a deadline.
        expect((await take('x1', 'd0', 4_000)).granted).toBe(false);
        expect((await take('x2')).granted).toBe(false);
        // An earlier waiter still goes first.
        expect(await take('x3', 'd2', 2_000)).toEqual({ granted: true, inUse: { realtime: 3 } });
        await store.releaseSlot(gate.key, 'r1');
        // d1's claim still stands: d0 yields again, and d1 takes the slot.
        expect((await take('x4', 'd0', 4_000)).granted).toBe(false);
        expect((await take('x4b', 'd1', 3_000)).granted).toBe(true);
        // d1 claims again; with two slots free, a later deadline takes one and leaves it the other.
        expect((await take('x5', 'd1', 3_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'r2');
        await store.releaseSlot(gate.key, 'x3');
        expect((await take('x6', 'd0', 4_000)).granted).toBe(true);
        expect((await take('x7', 'd0', 4_000)).granted).toBe(false);
        // The claimant's own grant ends its claim.
        expect((await take('x8', 'd1', 3_000)).granted).toBe(true);
        await store.releaseSlot(gate.key, 'x8');
        expect((await take('x9', 'd0', 4_000)).granted).toBe(true);
        // A claim lapses reclaimMs after the refusal that set it...
        expect((await take('y0', 'd1', 3_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'x9');
        await clock.advance(999);
        expect((await take('y1', 'd0', 4_000)).granted).toBe(false);
        await clock.advance(1);
        expect((await take('y2', 'd0', 4_000)).granted).toBe(true);
        // ... or at its waiter's deadline, whichever is first.
        expect((await take('y3', 'd1', 300)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'y2');
        await clock.advance(300);
        expect((await take('y4', 'd0', 4_000)).granted).toBe(true);
      });

      /** A gate of `capacity` slots whose asks name their asker and their waiter's deadline, `deadlineIn` from now. */
      const askingGate = (store: RateStore, clock: VirtualClock, capacity: number) => {
        const key = slotGateKey(`m-${uid()}`);
        const take = (tier: string, leaseId: string, tiers: SlotRequest['tiers'], asker: string, deadlineIn: number) =>
          store.acquireSlot({
            key,
            capacity,
            tiers,
            leaseMs: 60_000,
            reclaimMs: 1_000,
            tier,
            leaseId,
            asker,
            deadline: clock.now() + deadlineIn,
          });
        return { key, take };
      };

      it('a claimant refused while a slot is free drops its claim: its own spec holds it back, not the race', async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const { key, take } = askingGate(store, clock, 3);
        const strict = { realtime: { reserved: 2, lendable: 0 }, batch: { reserved: 1, lendable: 0 } };
        const lending = { ...strict, realtime: { reserved: 2, lendable: 1 } };
        for (const id of ['r0', 'r1']) expect((await take('realtime', id, strict, 'd9', 5_000)).granted).toBe(true);
        expect((await take('batch', 'b0', strict, 'd9', 5_000)).granted).toBe(true);
        // Full: d1's batch waiter claims the tier.
        expect((await take('batch', 'b1', strict, 'd1', 3_000)).granted).toBe(false);
        await store.releaseSlot(key, 'r0');
        // d0 could borrow the freed realtime slot, but yields to d1's claim...
        expect((await take('batch', 'b2', lending, 'd0', 4_000)).granted).toBe(false);
        // ... d1's own spec lends it nothing, so its refusal ends the claim, and d0 takes the slot.
        expect((await take('batch', 'b3', strict, 'd1', 3_000)).granted).toBe(false);
        expect(await take('batch', 'b4', lending, 'd0', 4_000)).toEqual({
          granted: true,
          inUse: { realtime: 1, batch: 2 },
        });
      });

      it("a room full but for a lender's keep is a race too: the refused asker claims it, a later deadline elsewhere yields", async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const gate = askingGate(store, clock, 4);
        // Realtime keeps one idle slot from long calls, never lent (no keepUnlessEndsWithinMs).
        const tiers = { realtime: { reserved: 3, lendable: 3, keep: 1 }, batch: { reserved: 1, lendable: 0 } };
        const take = (tier: string, leaseId: string, asker: string, deadlineIn: number) =>
          gate.take(tier, leaseId, tiers, asker, deadlineIn);
        expect((await take('realtime', 'r0', 'd9', 5_000)).granted).toBe(true);
        for (const id of ['b0', 'b1']) expect((await take('batch', id, 'd9', 5_000)).granted).toBe(true);
        // The free slot is realtime's keep: d1's batch waiter is refused, and claims the tier.
        expect((await take('batch', 'b2', 'd1', 3_000)).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b0');
        // d0 asks first for a later waiter: it leaves the slot to d1's.
        expect((await take('batch', 'b3', 'd0', 4_000)).granted).toBe(false);
        expect(await take('batch', 'b4', 'd1', 3_000)).toEqual({ granted: true, inUse: { realtime: 1, batch: 2 } });
      });

      /** 4 slots: realtime reserves 2 and batch 1, lending nothing; offline reserves 1 and lends it. */
      const yieldingGate = (store: RateStore, clock: VirtualClock) => {
        const key = slotGateKey(`m-${uid()}`);
        const tiers = {
          realtime: { reserved: 2, lendable: 0 },
          batch: { reserved: 1, lendable: 0 },
          offline: { reserved: 1, lendable: 1 },
        };
        const take = (tier: string, leaseId: string, asker: string, yieldTo?: string[]) =>
          store.acquireSlot({
            key,
            capacity: 4,
            tiers,
            leaseMs: 60_000,
            reclaimMs: 1_000,
            tier,
            leaseId,
            asker,
            deadline: clock.now() + (tier === 'offline' ? 3_600_000 : 60_000),
            ...(yieldTo ? { yieldTo } : {}),
          });
        return { key, take };
      };

      it('an ask that yields to heavier tiers leaves a slot to one waiting elsewhere, reclaims nothing from it, and takes a slot it could not take', async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const { key, take } = yieldingGate(store, clock);
        const heavier = ['realtime', 'batch'];
        for (const id of ['r0', 'r1']) expect((await take('realtime', id, 'd9')).granted).toBe(true);
        // Batch borrows offline's idle slot; offline, refused by the full room below its reservation, yields and marks nothing.
        for (const id of ['b0', 'b1']) expect((await take('batch', id, 'd9')).granted).toBe(true);
        expect((await take('offline', 'o0', 'd0', heavier)).granted).toBe(false);
        // Batch waits in d1: refused by the full room, it claims its tier.
        expect((await take('batch', 'b2', 'd1')).granted).toBe(false);
        await store.releaseSlot(key, 'b1');
        // Offline yields its slot to batch's claimant, so batch may borrow the slot.
        expect((await take('offline', 'o1', 'd0', heavier)).granted).toBe(false);
        expect(await take('batch', 'b3', 'd1')).toEqual({ granted: true, inUse: { realtime: 2, batch: 2 } });
        // Refused by the full room while batch waits, offline sets no mark: batch borrows its slot again.
        expect((await take('batch', 'b4', 'd1')).granted).toBe(false);
        expect((await take('offline', 'o2', 'd0', heavier)).granted).toBe(false);
        await store.releaseSlot(key, 'b3');
        expect((await take('batch', 'b5', 'd1')).granted).toBe(true);
        expect((await take('batch', 'b6', 'd1')).granted).toBe(false);
        await store.releaseSlot(key, 'r0');
        // A realtime slot, which batch may not borrow (realtime lends nothing): offline takes it.
        expect(await take('offline', 'o3', 'd0', heavier)).toEqual({
          granted: true,
          inUse: { realtime: 1, batch: 2, offline: 1 },
        });
      });

      it('an ask that yields reclaims nothing with no claim of a heavier tier standing too; pressed, it reclaims', async () => {
        const clock = new VirtualClock(10_000);
        const store = await open(clock);
        const run = async (yieldTo: string[]) => {
          const { key, take } = yieldingGate(store, clock);
          for (const id of ['r0', 'r1']) expect((await take('realtime', id, 'd9')).granted).toBe(true);
          for (const id of ['b0', 'b1']) expect((await take('batch', id, 'd9')).granted).toBe(true);
          // Refused by the full room below its reservation; no batch claim stands.
          expect((await take('offline', 'o0', 'd0', yieldTo)).granted).toBe(false);
          await store.releaseSlot(key, 'b1');
          // Batch, above its reservation, borrows offline's idle slot unless offline reclaims it.
          return (await take('batch', 'b2', 'd1')).granted;
        };
        expect(await run(['realtime', 'batch'])).toBe(true);
        expect(await run([])).toBe(false);
      });

      it('a tier refused at or above its reservation sets no reclaim mark', async () => {
        const store = await open(new VirtualClock(0));
        const gate = {
          key: slotGateKey(`m-${uid()}`),
          capacity: 2,
          tiers: { realtime: { reserved: 1, lendable: 1 }, batch: { reserved: 1, lendable: 1 } },
          leaseMs: 60_000,
        };
        const take = (tier: string, id: string) => store.acquireSlot({ ...gate, tier, leaseId: id });
        expect((await take('batch', 'b0')).granted).toBe(true);
        expect((await take('realtime', 'r0')).granted).toBe(true);
        // Both at their reservation, the gate full: batch is refused at its reservation.
        expect((await take('batch', 'b1')).granted).toBe(false);
        await store.releaseSlot(gate.key, 'b0');
        // Batch idle: realtime borrows its lendable slot at once.
        expect(await take('realtime', 'r1')).toEqual({ granted: true, inUse: { realtime: 2 } });
      });
    });

    describe('agrees with the embedded reference on random operation sequences', () => {
      const ops = fc.oneof(
        {
          arbitrary: fc.record({
            op: fc.constant('admit' as const),
            which: fc.subarray([0, 1, 2, 3], { minLength: 0 }),
            costs: fc.array(fc.integer({ min: 0, max: 7 }), { minLength: 4, maxLength: 4 }),
            reservoir: fc.boolean(),
            holdMs: fc.constantFrom(0, 1, 50, 1_000, 4_000),
          }),
          weight: 5,
        },
        {
          arbitrary: fc.record({
            op: fc.constant('reconcile' as const),
            which: fc.integer({ min: 0, max: 3 }),
            back: fc.integer({ min: 0, max: 2 }),
            delta: fc.integer({ min: -6, max: 6 }),
          }),
          weight: 1,
        },
        { arbitrary: fc.record({ op: fc.constant('leave' as const), which: fc.nat() }), weight: 1 },
        {
          arbitrary: fc.record({
            op: fc.constant('pace' as const),
            key: fc.integer({ min: 0, max: 1 }),
            rate: fc.constantFrom(1, 3, 7, 10, 12.5, 1000 / 3),
            burst: fc.integer({ min: 1, max: 4 }),
          }),
          weight: 3,
        },
        {
          arbitrary: fc.record({
            op: fc.constant('acquire' as const),
            tier: fc.constantFrom('realtime', 'batch', 'offline', 'other'),
            lease: fc.integer({ min: 0, max: 7 }),
            leaseMs: fc.integer({ min: 1, max: 3000 }),
            reclaimMs: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
            moreWaiting: fc.option(fc.boolean(), { nil: undefined }),
            yieldTo: fc.option(fc.subarray(['realtime', 'batch', 'offline', 'other']), { nil: undefined }),
            ask: fc.option(
              fc.record({
                asker: fc.constantFrom('d0', 'd1', 'd2'),
                deadlineIn: fc.integer({ min: -100, max: 5_000 }),
                fraction: fc.constantFrom(0, 0.25),
              }),
              { nil: undefined },
            ),
          }),
          weight: 3,
        },
        {
          arbitrary: fc.record({ op: fc.constant('release' as const), lease: fc.integer({ min: 0, max: 7 }) }),
          weight: 1,
        },
        {
          arbitrary: fc.record({
            op: fc.constant('advance' as const),
            ms: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 4000 })),
          }),
          weight: 3,
        },
      );
      const gateArb = fc.record({
        capacity: fc.integer({ min: 1, max: 6 }),
        realtime: fc.record({ reserved: fc.integer({ min: 0, max: 3 }), lendable: fc.integer({ min: 0, max: 3 }) }),
        batch: fc.record({ reserved: fc.integer({ min: 0, max: 2 }), lendable: fc.integer({ min: 0, max: 2 }) }),
        offline: fc.record({ reserved: fc.integer({ min: 0, max: 1 }), lendable: fc.integer({ min: 0, max: 1 }) }),
      });

      it('admit, reconcile, reservoir, pace and slot decisions are identical step by step', async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 0, max: 10_000_000 }),
            gateArb,
            fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 4, maxLength: 4 }),
            fc.integer({ min: 0, max: 4 }),
            fc.array(ops, { maxLength: 40 }),
            async (start, g, limits, reservoirMax, steps) => {
              const clock = new VirtualClock(start);
              const store = await makeStore(clock);
              const reference = createEmbeddedStore(clock);
              const t = `t-${uid()}`;
              const windowLimits: WindowLimit[] = [
                limitFor(t, 'account-model', 'requests', limits[0]!, 1_000, 1),
                limitFor(t, 'tenant-model', 'tokens', limits[1]!, 1_000, 1),
                limitFor(t, 'tenant', 'tokens', limits[2]!, 5_000, 1),
                limitFor(t, 'tenant', 'requests', limits[3]!, 3_000, 1),
              ];
              const reservoir = { key: reservoirKey(t, 'topic'), max: reservoirMax };
              const members: string[] = [];
              const gate: Omit<SlotRequest, 'tier' | 'leaseId' | 'leaseMs'> = {
                key: slotGateKey(`m-${uid()}`),
                capacity: g.capacity,
                tiers: { realtime: g.realtime, batch: g.batch, offline: g.offline },
              };
              const starts: number[][] = [[], [], [], []];
              for (const step of steps) {
                const both = async <T>(f: (s: RateStore) => Promise<T>): Promise<T> => {
                  const [got, want] = await Promise.all([f(store), f(reference)]);
                  expect(got, JSON.stringify(step)).toEqual(want);
                  return want;
                };
                switch (step.op) {
                  case 'admit': {
                    const chosen = step.which.map((i) => ({ ...windowLimits[i]!, cost: step.costs[i]! }));
                    const member = `r${members.length}`;
                    members.push(member);
                    const place = step.reservoir ? { ...reservoir, member, holdMs: step.holdMs } : undefined;
                    const d = await both((s) => s.admit({ limits: chosen, reservoir: place }));
                    d.windows.forEach((w, i) => starts[step.which[i]!]!.push(w.windowStart));
                    break;
                  }
                  case 'reconcile': {
                    const history = starts[step.which]!;
                    const windowStart = history[history.length - 1 - step.back] ?? clock.now();
                    await both((s) =>
                      s.reconcile([{ key: windowLimits[step.which]!.key, windowStart, delta: step.delta }]),
                    );
                    break;
                  }
                  case 'leave':
                    await both((s) =>
                      s.leaveReservoir(
                        reservoirPlace(reservoir.key, members[step.which % Math.max(1, members.length)] ?? 'r0'),
                      ),
                    );
                    break;
                  case 'pace':
                    await both((s) => s.pace({ key: paceKey(t, `p${step.key}`), rate: step.rate, burst: step.burst }));
                    break;
                  case 'acquire':
                    await both((s) =>
                      s.acquireSlot({
                        ...gate,
                        tier: step.tier,
                        leaseId: `l${step.lease}`,
                        leaseMs: step.leaseMs,
                        reclaimMs: step.reclaimMs,
                        moreWaiting: step.moreWaiting,
                        ...(step.yieldTo ? { yieldTo: step.yieldTo } : {}),
                        ...(step.ask
                          ? { asker: step.ask.asker, deadline: clock.now() + step.ask.deadlineIn + step.ask.fraction }
                          : {}),
                      }),
                    );
                    break;
                  case 'release':
                    await both((s) => s.releaseSlot(gate.key, `l${step.lease}`));
                    break;
                  case 'advance':
                    await clock.advance(step.ms);
                    break;
                }
              }
              await store.close();
            },
          ),
          { numRuns: 60 },
        );
      });

      // Slots alone, in long sequences where every ask names its asker: claims stand often enough
      // for the asks that yield to heavier tiers to meet them (the mixed sequences above rarely do).
      it('slot decisions with claims and yielding asks are identical step by step', async () => {
        const slotOps = fc.oneof(
          {
            arbitrary: fc.record({
              op: fc.constant('acquire' as const),
              tier: fc.constantFrom('realtime', 'batch', 'offline'),
              lease: fc.integer({ min: 0, max: 9 }),
              asker: fc.constantFrom('d0', 'd1'),
              deadlineIn: fc.integer({ min: 100, max: 5_000 }),
              yieldTo: fc.subarray(['realtime', 'batch', 'offline']),
            }),
            weight: 4,
          },
          {
            arbitrary: fc.record({ op: fc.constant('release' as const), lease: fc.integer({ min: 0, max: 9 }) }),
            weight: 2,
          },
          {
            arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 800 }) }),
            weight: 1,
          },
        );
        await fc.assert(
          fc.asyncProperty(gateArb, fc.array(slotOps, { minLength: 20, maxLength: 60 }), async (g, steps) => {
            const clock = new VirtualClock(1_000_000);
            const store = await makeStore(clock);
            const reference = createEmbeddedStore(clock);
            const gate = {
              key: slotGateKey(`m-${uid()}`),
              capacity: g.capacity,
              tiers: { realtime: g.realtime, batch: g.batch, offline: g.offline },
              leaseMs: 60_000,
              reclaimMs: 1_000,
            };
            for (const step of steps) {
              const both = async <T>(f: (s: RateStore) => Promise<T>): Promise<T> => {
                const [got, want] = await Promise.all([f(store), f(reference)]);
                expect(got, JSON.stringify(step)).toEqual(want);
                return want;
              };
              if (step.op === 'acquire')
                await both((s) =>
                  s.acquireSlot({
                    ...gate,
                    tier: step.tier,
                    leaseId: `l${step.lease}`,
                    asker: step.asker,
                    deadline: clock.now() + step.deadlineIn,
                    yieldTo: step.yieldTo,
                  }),
                );
              else if (step.op === 'release') await both((s) => s.releaseSlot(gate.key, `l${step.lease}`));
              else await clock.advance(step.ms);
            }
            await store.close();
          }),
          { numRuns: 40 },
        );
      });
    });

    describe('real time (Redis TIME for the Redis stores)', () => {
      it('counts in clock-aligned windows of the store clock and resets with them', async () => {
        const store = await open(undefined);
        const windowMs = 1_000;
        await roomInWindow(windowMs, 600);
        const l = limitFor(`t-${uid()}`, 'tenant', 'requests', 2, windowMs, 1);
        const before = Date.now();
        const a = await store.admit({ limits: [l] });
        expect(a.allowed).toBe(true);
        const w = a.windows[0]!;
        expect(w.windowStart % windowMs).toBe(0);
        expect(w.windowStart).toBeGreaterThan(before - windowMs - 50);
        expect(w.windowStart).toBeLessThanOrEqual(Date.now() + 50);
        expect((await store.admit({ limits: [l] })).allowed).toBe(true);
        const refused = await store.admit({ limits: [l] });
        expect(refused.allowed).toBe(false);
        if (refused.allowed) return;
        expect(refused.retryAfterMs).toBeGreaterThan(0);
        expect(refused.retryAfterMs).toBeLessThanOrEqual(windowMs);
        await sleep(refused.retryAfterMs + 20);
        expect((await store.admit({ limits: [l] })).allowed).toBe(true);
      });

      it('paces on the store clock', async () => {
        const store = await open(undefined);
        const p = { key: paceKey(`t-${uid()}`, 'rt'), rate: 20, burst: 2 };
        expect(await store.pace(p)).toBe(0);
        expect(await store.pace(p)).toBe(0);
        const wait = await store.pace(p);
        expect(wait).toBeGreaterThan(0);
        expect(wait).toBeLessThanOrEqual(50);
        await sleep(wait + 5);
        expect(await store.pace(p)).toBe(0);
      });

      it('reclaims an unreleased lease after its expiry', async () => {
        const store = await open(undefined);
        const gate = { key: slotGateKey(`m-${uid()}`), capacity: 1, tiers: {}, leaseMs: 150 };
        expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'a' })).granted).toBe(true);
        const refused = await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'b' });
        expect(refused.granted).toBe(false);
        await sleep(200);
        expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'c' })).granted).toBe(true);
      });
    });
  });
}

/** The embedded store has no Redis TIME: "no clock" means the wall clock. */
export const embeddedFactory: StoreFactory = async (clock) => createEmbeddedStore(clock ?? wallClock);
