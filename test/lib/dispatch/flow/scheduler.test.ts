import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../../lib/clock/virtual-clock.js';
import {
  createFlowControl,
  type Shed,
  type ShedAnswered,
  DEFAULT_MAX_SEND_BACK_MS,
  PLACES_PER_RETURN,
  type FlowControl,
  type Grant,
  type SlotAsk,
  type Verdict,
} from '../../../../lib/dispatch/flow/scheduler.js';
import { RECALL_WORTH_MS } from '../../../../lib/dispatch/flow/sent-back.js';
import { parsePolicy } from '../../../../lib/policy/schema.js';
import { createEmbeddedStore } from '../../../../lib/store/embedded.js';
import { bestReport, FAIR_SHARE_TTL_MS } from '../../../../lib/limits/fair-share.js';
import { fairShareKey, reservoirKey } from '../../../../lib/store/keys.js';
import { basePolicy } from '../../policy/fixtures.js';

/** 8 slots: realtime reserves 4, batch 2, offline 1, one unreserved. */
function setup(
  options: {
    maxWaiting?: number;
    slots?: number;
    workers?: number;
    otherModelSlots?: number;
    onShed?: (shed: Shed) => Promise<ShedAnswered>;
    fairShareAtAdmission?: boolean;
  } = {},
) {
  const clock = new VirtualClock(0);
  const raw = basePolicy();
  raw.models.m!.slots = options.slots ?? 8;
  // A second model, `n`, served by the same dispatchers from its own slots.
  if (options.otherModelSlots) raw.models.n = { ...raw.models.m!, slots: options.otherModelSlots };
  if (options.fairShareAtAdmission !== undefined)
    raw.tiers.batch = { ...raw.tiers.batch!, fairShareAtAdmission: options.fairShareAtAdmission };
  const policy = parsePolicy(raw);
  const store = createEmbeddedStore(clock);
  let n = 0;
  /** A dispatcher's flow control; more than one share the store, as dispatchers do. */
  const flowControl = (maxWaiting = options.maxWaiting ?? 64) =>
    createFlowControl({
      clock,
      store,
      policy: () => policy,
      newId: () => `lease-${n++}`,
      options: {
        leaseMs: 60_000,
        minSuspendMs: 50,
        maxWaiting,
        ...(options.workers ? { workers: options.workers } : {}),
      },
      ...(options.onShed ? { onShed: options.onShed } : {}),
    });
  let topics = 0;
  // Each ask its own LiteTopic by default, as with one message in flight per LiteTopic (a FIFO group).
  const askOf =
    (flows: FlowControl) =>
    (tier: string, tenant = 't', account = 'a', over: Partial<SlotAsk> = {}) =>
      flows.ask({
        flow: { tier, tenant, account },
        model: 'm',
        deadline: clock.now() + 60_000,
        estimate: 100,
        promptEstimate: 0,
        liteTopic: `lt-${topics++}`,
        ...over,
      });
  const flows = flowControl();
  return { clock, store, flows, ask: askOf(flows), flowControl, askOf };
}

/** A call's use: all output, as these asks are. */
const out = (output: number) => ({ prompt: 0, output });

const granted = (v: Verdict): Grant => {
  if (v.kind !== 'granted') throw new Error(`expected a grant, got ${JSON.stringify(v)}`);
  return v.grant;
};

/**
 * Two slots at 10 ms a token (two calls of 100 tokens took 1 s each), both busy with calls
 * like `over`, and two more waiting: the room of two is full, so the next ask is sent back.
 * `end` releases everything.
 */
async function fullRoomOfTwo(over: Partial<SlotAsk> = {}) {
  const t = setup({ slots: 2, maxWaiting: 2 });
  const { clock, ask } = t;
  const first = await Promise.all([ask('batch'), ask('batch')]);
  await clock.advance(1_000);
  for (const v of first) await granted(v).release(out(100));
  const calls = await Promise.all([ask('batch', 't', 'a', over), ask('batch', 't', 'a', over)]);
  const waiting = [ask('batch', 't', 'a', over), ask('batch', 't', 'a', over)];
  await clock.advance(1);
  const end = async () => {
    for (const c of calls) await granted(c).release(out(100));
    for (const w of waiting)
      void w.then(async (v) => {
        if (v.kind === 'granted') await v.grant.release(out(100));
      });
    await clock.advance(1);
  };
  return { ...t, end };
}

describe('flow control', () => {
  it('is work-conserving: one tier alone gets every slot, with nothing left idle', async () => {
    const { clock, ask, flows } = setup();
    const asks = Array.from({ length: 10 }, () => ask('batch'));
    await clock.advance(1);
    const settled: Verdict[] = [];
    for (const a of asks) void a.then((v) => settled.push(v));
    await clock.advance(1);
    expect(settled.filter((v) => v.kind === 'granted')).toHaveLength(8);
    expect(flows.waiting()).toBe(2);
  });

  it('a released slot goes to the tier below its reservation, not to the borrower that waited longer', async () => {
    const { clock, ask } = setup();
    const batch = await Promise.all(Array.from({ length: 8 }, () => ask('batch')));
    const moreBatch = ask('batch');
    await clock.advance(1);
    const realtime = ask('realtime');
    await clock.advance(1);
    await granted(batch[0]!).release(out(100));
    await clock.advance(1);
    expect((await realtime).kind).toBe('granted');
    let second: Verdict | undefined;
    void moreBatch.then((v) => (second = v));
    await clock.advance(1);
    expect(second).toBeUndefined();
    await granted(batch[1]!).release(out(100));
    await clock.advance(1);
    expect(second?.kind).toBe('granted');
  });

  it('among flows served alike, starts the call expected to end in the widest gap between releases first', async () => {
    const { clock, ask } = setup();
    const first = granted(await ask('batch', 'f', 'fill', { estimate: 100 }));
    await clock.advance(1_000);
    await first.release(out(100)); // the model's speed: 10 ms per token
    await clock.advance(1);
    const fill = (
      await Promise.all(
        [20, 30, 200, 210, 220, 230, 240, 250].map((estimate) => ask('batch', 'f', 'fill', { estimate })),
      )
    ).map(granted);
    const order: string[] = [];
    // Strict order starts `beside` first (same counters, it came first): it would end among the clump at 1.8-2.3 s.
    void ask('batch', 't', 'beside', { estimate: 190 }).then(() => order.push('beside'));
    void ask('batch', 't', 'in-gap', { estimate: 100 }).then(() => order.push('in-gap'));
    await clock.advance(200);
    await fill[0]!.release(out(20));
    await clock.advance(1);
    // Ends due then: 0.1 s, then nothing until 1.8 s. The call ending at 1 s splits that gap.
    expect(order).toEqual(['in-gap']);
  });

  it('splits slots beyond reservations among tiers by weight', async () => {
    const { clock, ask } = setup({ slots: 8 });
    // Realtime is idle: its 4 reserved slots and the unreserved one are lent.
    const started: string[] = [];
    const grants: Grant[] = [];
    for (let i = 0; i < 20; i++) {
      for (const tier of ['batch', 'offline']) {
        void ask(tier).then((v) => {
          if (v.kind === 'granted') {
            started.push(tier);
            grants.push(v.grant);
          }
        });
      }
    }
    await clock.advance(1);
    // batch reserved 2, offline 1; 5 more split 2:1 -> batch 2 + about 3, offline 1 + about 2.
    expect(started).toHaveLength(8);
    const batch = started.filter((t) => t === 'batch').length;
    expect(batch).toBeGreaterThanOrEqual(5);
    expect(batch).toBeLessThanOrEqual(6);
  });

  /**
   * 8 slots held by realtime; offline (its work due in `offlineSlackMs`) and then batch (5 min)
   * wait, batch in this dispatcher or in another sharing the store. The realtime calls end one by
   * one: how many of the 8 freed slots go to offline.
   */
  async function offlineBesideBatch(offlineSlackMs: number, batchElsewhere: boolean): Promise<number> {
    const { clock, ask: here, flowControl, askOf } = setup({ slots: 8 });
    // Elsewhere, this dispatcher's tier order never sees batch: only the gate's claims tell of it.
    const batchAsk = batchElsewhere ? askOf(flowControl()) : here;
    const holders = await Promise.all(Array.from({ length: 8 }, () => here('realtime')));
    const started: string[] = [];
    const track = (tier: string, v: Promise<Verdict>) => void v.then((r) => r.kind === 'granted' && started.push(tier));
    for (let i = 0; i < 4; i++) track('offline', here('offline', 'o', 'o', { deadline: clock.now() + offlineSlackMs }));
    for (let i = 0; i < 12; i++) track('batch', batchAsk('batch', 'b', 'b', { deadline: clock.now() + 300_000 }));
    // Offline, refused alone on the full pool before batch came, marked itself reclaiming; the mark lapses.
    await clock.advance(1_100);
    expect(started).toEqual([]);
    for (const h of holders) {
      // Many tokens for the time held: batch's calls look short, so realtime keeps no headroom from them.
      await granted(h).release(out(10_000));
      await clock.advance(1);
    }
    expect(started).toHaveLength(8);
    return started.filter((t) => t === 'offline').length;
  }

  it('a lighter tier with slack yields its reservation to a heavier tier that waits; pressed, it claims it again', async () => {
    // Offline may wait an hour: nothing of it is pressed, and every freed slot goes to batch.
    expect(await offlineBesideBatch(3_600_000, false)).toBe(0);
    // Past half its maximum wait offline is pressed: its reservation (1 slot) and its weight count again.
    expect(await offlineBesideBatch(1_000_000, false)).toBeGreaterThanOrEqual(1);
  });

  it('a lighter tier with slack yields to a heavier tier waiting in another dispatcher; pressed, it does not', async () => {
    // Before the ask named the tiers it yields to, offline took 4 of the 8 slots here.
    expect(await offlineBesideBatch(3_600_000, true)).toBe(0);
    expect(await offlineBesideBatch(1_000_000, true)).toBeGreaterThanOrEqual(1);
  });

  /**
   * Realtime had `peak` calls at once, now holds `holding` (each due to end within 1 s, its
   * short-call time); offline then asks, `afterMs` later, for calls of 100 s, longer than
   * realtime's maximum wait (10 s): how many slots offline gets.
   */
  async function longCallsBesideRealtime(o: { peak: number; holding?: number; afterMs?: number; slots?: number }) {
    const { clock, ask } = setup({ slots: o.slots ?? 8 });
    // Teach it the model's speed: 100 tokens held a slot 1 s.
    const first = await Promise.all(Array.from({ length: o.peak }, () => ask('realtime', 'r', 'r')));
    await clock.advance(1_000);
    for (const v of first) await granted(v).release(out(100));
    const holding = await Promise.all(Array.from({ length: o.holding ?? 1 }, () => ask('realtime', 'r', 'r')));
    await clock.advance(o.afterMs ?? 0);
    let started = 0;
    for (let i = 0; i < 16; i++)
      void ask('offline', 'o', 'o', { estimate: 10_000, deadline: clock.now() + 3_600_000 }).then(
        (v) => v.kind === 'granted' && started++,
      );
    await clock.advance(1);
    const before = started;
    for (const h of holding) await granted(h).release(out(100));
    return before;
  }

  it("keeps a lender's recent demand and its headroom from calls it cannot outwait, until the demand is a maximum wait old", async () => {
    // Realtime (4 reserved) holds 1 and keeps its headroom: offline gets its 1, batch's idle 2, the unreserved 1, and 2.
    expect(await longCallsBesideRealtime({ peak: 1 })).toBe(6);
    // It had 3 at once lately: it keeps 2 more besides the headroom, all of its idle slots.
    expect(await longCallsBesideRealtime({ peak: 3 })).toBe(4);
    // 10 s after that peak, only the headroom again.
    expect(await longCallsBesideRealtime({ peak: 3, afterMs: 10_000 })).toBe(6);
  });

  it('counts calls due to end within the lender short-call time past the first RELEASES_NEAR - 1 against its need', async () => {
    // 16 slots: realtime reserves 9, batch 4, offline 2, one unreserved. Realtime had 6 at once and holds 3, all
    // due within 1 s: of its need of 3, one is covered by the third near release; it keeps 2 + the headroom of its 6
    // idle, and offline gets its 2, batch's 4, the unreserved 1 and 3.
    expect(await longCallsBesideRealtime({ peak: 6, holding: 3, slots: 16 })).toBe(10);
    // Holding 2, both near: no release past the first two, so all of its need of 4 is kept, and the headroom.
    expect(await longCallsBesideRealtime({ peak: 6, holding: 2, slots: 16 })).toBe(9);
  });

  it('answers at once a request that cannot start before its deadline given the work ahead of it', async () => {
    const { clock, ask } = setup({ slots: 1 });
    // Teach it the model's speed: 100 tokens held the slot 1 s.
    const first = granted(await ask('batch'));
    await clock.advance(1_000);
    await first.release(out(100));
    const busy = granted(await ask('batch'));
    // Heavier work ahead of it, whatever its deadline.
    for (let i = 0; i < 5; i++) void ask('realtime');
    await clock.advance(1);
    const late = await ask('batch', 't', 'a', { deadline: clock.now() + 2_000 });
    expect(late.kind).toBe('late');
    if (late.kind === 'late') expect(late.retryAfterMs).toBeGreaterThanOrEqual(4_000);
    await busy.release(out(100));
  });

  it("counts the work ahead at what its tier's calls use of what they ask, not at max_tokens", async () => {
    const { clock, ask } = setup({ slots: 1 });
    // Realtime calls ask 1,000 tokens and use 100: 10 ms a token, a tenth of what they ask.
    const first = granted(await ask('realtime', 't', 'a', { estimate: 1_000 }));
    await clock.advance(1_000);
    await first.release(out(100));
    const busy = granted(await ask('realtime', 't', 'a', { estimate: 1_000 }));
    const ahead = ask('realtime', 't', 'a', { estimate: 1_000, deadline: clock.now() + 9_000 });
    await clock.advance(1);
    // One ahead expected to take 1 s, not 10 s: it waits rather than being answered late.
    const next = ask('realtime', 't', 'a', { estimate: 1_000, deadline: clock.now() + 9_500 });
    let verdict: Verdict | undefined;
    void next.then((v) => (verdict = v));
    await clock.advance(1);
    expect(verdict).toBeUndefined();
    await busy.release(out(100));
    for (const w of [ahead, next]) void w.then((v) => (v.kind === 'granted' ? v.grant.release(out(100)) : undefined));
    await clock.advance(1);
  });

  it('past its bound, a heavier newcomer takes the place of the worst waiter, which goes back with a Suspend', async () => {
    const { clock, ask } = setup({ slots: 1, maxWaiting: 2 });
    const holder = granted(await ask('batch'));
    const offline = ask('offline');
    // Batch waits up to 5 min: a deadline 4 min away is not pressing yet (half of the wait).
    const batch = ask('batch', 't', 'a', { deadline: clock.now() + 240_000 });
    await clock.advance(1);
    const realtime = ask('realtime');
    expect((await offline).kind).toBe('suspend');
    // Same weight as the worst (batch), an earlier deadline that does not press yet: it goes back,
    // or two sent-back requests would evict each other in turn, a delivery each time.
    expect((await ask('batch', 't', 'b', { deadline: clock.now() + 200_000 })).kind).toBe('suspend');
    // Same weight, a pressing deadline while the worst's is not: it takes that place.
    const urgent = ask('batch', 't', 'a', { deadline: clock.now() + 59_000 });
    expect((await batch).kind).toBe('suspend');
    // Same weight, both pressing: the newcomer goes back, earlier deadline or not.
    expect((await ask('batch', 't', 'a', { deadline: clock.now() + 30_000 })).kind).toBe('suspend');
    await holder.release(out(100));
    const next = granted(await realtime);
    await next.release(out(100));
    expect((await urgent).kind).toBe('granted');
  });

  it("keeps a place for every account: one account's backlog gives up its latest to an account with none waiting", async () => {
    const { clock, ask } = setup({ slots: 1, maxWaiting: 3 });
    const holder = granted(await ask('batch', 'other', 'x'));
    // Batch waits 5 min: none of these deadlines presses.
    const crowd = [0, 1, 2].map((i) => ask('batch', 'crowd', 'c', { deadline: clock.now() + 200_000 + i }));
    await clock.advance(1);
    // The room is full of one account's requests; a tenant with nothing waiting takes the latest's place.
    const steady = ask('batch', 'steady', 's', { deadline: clock.now() + 250_000 });
    expect((await crowd[2]!).kind).toBe('suspend');
    // Now it holds a place: its next request goes back, and so does the crowd's, whose account still waits here.
    expect((await ask('batch', 'steady', 's', { deadline: clock.now() + 250_000 })).kind).toBe('suspend');
    expect((await ask('batch', 'crowd', 'c', { deadline: clock.now() + 260_000 })).kind).toBe('suspend');
    // Another account with none waiting takes the next latest of the crowd, which keeps one here.
    const third = ask('batch', 'third', 't', { deadline: clock.now() + 250_000 });
    expect((await crowd[1]!).kind).toBe('suspend');
    // Every account now holds one: a fourth goes back rather than take a lone request's place.
    expect((await ask('batch', 'fourth', 'f', { deadline: clock.now() + 250_000 })).kind).toBe('suspend');
    await holder.release(out(100));
    const next = granted(await crowd[0]!);
    await next.release(out(100));
    await clock.advance(1);
    for (const w of [steady, third]) void w.then((v) => (v.kind === 'granted' ? v.grant.release(out(100)) : undefined));
  });

  it("starts a request of a model with a free slot however full the room is with another model's backlog", async () => {
    const { clock, ask, flows } = setup({ slots: 2, otherModelSlots: 2, maxWaiting: 4 });
    const calls = await Promise.all([ask('batch'), ask('batch')]);
    const backlog = Array.from({ length: 4 }, () => ask('batch'));
    await clock.advance(1);
    expect(flows.waiting()).toBe(4);
    // Model n's slots are free: its requests start, and m's backlog keeps every place.
    const other = [
      granted(await ask('batch', 't', 'a', { model: 'n' })),
      granted(await ask('realtime', 't', 'a', { model: 'n' })),
    ];
    expect(flows.waiting()).toBe(4);
    const settled: Verdict['kind'][] = [];
    for (const w of backlog) void w.then((v) => settled.push(v.kind));
    await clock.advance(1);
    expect(settled).toEqual([]);
    for (const c of [...calls.map(granted), ...other]) await c.release(out(100));
    for (const w of backlog) void w.then((v) => (v.kind === 'granted' ? v.grant.release(out(100)) : undefined));
    await clock.advance(1);
  });

  it('gives each model with work an even share of the room: a model below its share takes the place of the worst waiter of the one with most', async () => {
    const { clock, ask, flows } = setup({ slots: 1, otherModelSlots: 1, maxWaiting: 4 });
    const calls = [granted(await ask('batch')), granted(await ask('batch', 't', 'a', { model: 'n' }))];
    // Batch waits 5 min: none of these deadlines presses; the latest-due is the worst.
    const backlog = [0, 1, 2, 3].map((i) => ask('batch', 't', 'a', { deadline: clock.now() + 200_000 + i }));
    await clock.advance(1);
    // n's slot is taken, so its request waits: m gives up its worst waiter for it, and again for the next.
    const later = { deadline: clock.now() + 250_000 };
    const fromN = [ask('batch', 't', 'a', { ...later, model: 'n' }), ask('batch', 't', 'a', { ...later, model: 'n' })];
    expect((await backlog[3]!).kind).toBe('suspend');
    expect((await backlog[2]!).kind).toBe('suspend');
    expect(flows.waiting()).toBe(4);
    // At its share (two of four places), n's next goes back, and so does m's: neither takes the other's place.
    expect((await ask('batch', 't', 'a', { ...later, model: 'n' })).kind).toBe('suspend');
    expect((await ask('batch', 't', 'a', later)).kind).toBe('suspend');
    for (const c of calls) await c.release(out(100));
    for (const w of [...backlog, ...fromN])
      void w.then((v) => (v.kind === 'granted' ? v.grant.release(out(100)) : undefined));
    await clock.advance(1);
  });

  it('keeps workers free for newcomers: the room shrinks as its own calls take workers', async () => {
    // 16 workers, 2 of them kept free; 8 slots. With 8 calls running, 16 - 8 - 2 = 6 may wait.
    const { clock, ask, flows } = setup({ slots: 8, workers: 16, maxWaiting: 16 });
    const calls = await Promise.all(Array.from({ length: 8 }, () => ask('batch')));
    const waiters = Array.from({ length: 6 }, () => ask('batch'));
    await clock.advance(1);
    expect(flows.waiting()).toBe(6);
    // The room is full for a lighter newcomer; a heavier one still takes a place.
    expect((await ask('batch')).kind).toBe('suspend');
    const realtime = ask('realtime');
    await clock.advance(1);
    expect(flows.waiting()).toBe(6);
    for (const c of calls) await granted(c).release(out(100));
    expect((await realtime).kind).toBe('granted');
    for (const w of waiters)
      void w.then(async (v) => {
        if (v.kind === 'granted') await v.grant.release(out(100));
      });
    await clock.advance(1);
  });

  it('calls hold at most half the workers: past that a call gives its worker back and the room keeps its places', async () => {
    // 16 workers, 2 kept free, 16 slots. Holding their workers, 16 calls would leave the room
    // 16 - 16 - 2 = 0 places (1, its floor): no worker to bring a request to the scheduler.
    const { clock, ask, flows } = setup({ slots: 16, workers: 16, maxWaiting: 16 });
    const calls: Grant[] = [];
    for (let i = 0; i < 16; i++) calls.push(granted(await ask('batch')));
    expect(calls.map((c) => c.freesWorker)).toEqual([...Array(8).fill(false), ...Array(8).fill(true)]);
    // 8 calls hold workers: 16 - 8 - 2 = 6 may wait.
    const waiters = Array.from({ length: 6 }, () => ask('batch'));
    await clock.advance(1);
    expect(flows.waiting()).toBe(6);
    expect((await ask('batch')).kind).toBe('suspend');
    // A call that held its worker ends: its place goes to the next, which holds one again.
    await calls[0]!.release(out(100));
    const next = granted(await waiters[0]!);
    expect(next.freesWorker).toBe(false);
    for (const c of [...calls.slice(1), next]) await c.release(out(100));
    for (const w of waiters.slice(1))
      void w.then(async (v) => {
        if (v.kind === 'granted') await v.grant.release(out(100));
      });
    await clock.advance(1);
  });

  it('sends back from a full room PLACES_PER_RETURN starts apart, not all to return at once', async () => {
    const { ask, end } = await fullRoomOfTwo();
    const back: number[] = [];
    for (let i = 0; i < 4; i++) {
      const v = await ask('batch');
      if (v.kind !== 'suspend') throw new Error(`expected a Suspend, got ${JSON.stringify(v)}`);
      // Whole ms, as the broker's Suspend takes them (the spacing itself is a fraction of a start here).
      expect(Number.isInteger(v.ms)).toBe(true);
      back.push(v.ms);
    }
    // The two waiters need 1 s of both slots to start; then one more start each 0.5 s, and a
    // return every PLACES_PER_RETURN starts, so each finds that many places.
    expect(back[0]).toBeGreaterThanOrEqual(900);
    for (let i = 1; i < back.length; i++) {
      expect(back[i]! - back[i - 1]!).toBeGreaterThanOrEqual(PLACES_PER_RETURN * 500 - 50);
      expect(back[i]! - back[i - 1]!).toBeLessThanOrEqual(PLACES_PER_RETURN * 500 + 50);
    }
    await end();
  });

  it("before the model's first completion, sends back for at least what the waiters would take at the calls' pace so far", async () => {
    const { clock, ask } = setup({ slots: 2, maxWaiting: 2 });
    const calls = [granted(await ask('batch')), granted(await ask('batch'))];
    const waiting = [ask('batch'), ask('batch')];
    await clock.advance(1);
    // No call has ended: the speed is not known, and a Suspend of the shortest only brings it back to a full room.
    const first = await ask('batch');
    expect(first).toMatchObject({ kind: 'suspend', ms: 50 });
    // 2 s in, the calls of 100 tokens took 20 ms a token at least: the two waiters need 2 × 100 × 20 ms of two slots.
    await clock.advance(2_000);
    const later = await ask('batch');
    if (later.kind !== 'suspend') throw new Error(`expected a Suspend, got ${JSON.stringify(later)}`);
    expect(later.ms).toBeGreaterThanOrEqual(1_990);
    for (const c of calls) await c.release(out(100));
    for (const w of waiting) void w.then((v) => (v.kind === 'granted' ? v.grant.release(out(100)) : undefined));
    await clock.advance(1);
  });

  it('answers at once, not with a Suspend to its deadline, a request the room cannot start before it', async () => {
    // Every waiter presses (under half of batch's 5-minute wait left), so a pressing newcomer takes no place.
    const pressing = { deadline: 140_000, estimate: 10_000 };
    const { clock, ask, end } = await fullRoomOfTwo(pressing);
    // The waiters here need 100 s of both slots to start; this deadline is a minute away.
    const late = await ask('batch', 't', 'a', { ...pressing, deadline: clock.now() + 60_000 });
    expect(late).toEqual({ kind: 'late', retryAfterMs: 100_000 });
    // Within a tenth of batch's wait of its deadline, it is Suspended until then: a room that
    // empties sooner than expected still calls it back.
    const near = await ask('batch', 't', 'a', { ...pressing, deadline: clock.now() + 20_000 });
    expect(near).toMatchObject({ kind: 'suspend', ms: 20_000 });
    await end();
  });

  it("sends a message back with its LiteTopic's pending return, its place in the schedule kept for it", async () => {
    const { ask, end } = await fullRoomOfTwo();
    const back = async (liteTopic: string) => {
      const v = await ask('batch', 't', 'a', { liteTopic });
      if (v.kind !== 'suspend') throw new Error(`expected a Suspend, got ${JSON.stringify(v)}`);
      return v.ms;
    };
    const x1 = await back('X');
    // In flight together (a non-orderly group): the broker keeps the LiteTopic's last Suspend, so a
    // later place for this one would move the first one's return too and leave its place empty.
    const x2 = await back('X');
    const y = await back('Y');
    expect(x2).toBe(x1);
    // Y returns after the places of both X messages: they need them when X is back.
    expect(y - x1).toBeGreaterThanOrEqual(2 * PLACES_PER_RETURN * 500 - 50);
    expect(y - x1).toBeLessThanOrEqual(2 * PLACES_PER_RETURN * 500 + 50);
    await end();
  });

  it('sends back for DEFAULT_MAX_SEND_BACK_MS at most, however much work waits ahead', async () => {
    // The deadline is far past anything the clock reaches here.
    const long = { deadline: 3_600_000, estimate: 30_000 };
    const { ask, end } = await fullRoomOfTwo(long);
    // The waiters here need 300 s of both slots to start; the demand ahead of them may end long
    // before, and a room that does not empty (other dispatchers' requests take the slots) never calls it back.
    expect(await ask('batch', 't', 'a', long)).toMatchObject({ kind: 'suspend', ms: DEFAULT_MAX_SEND_BACK_MS });
    await end();
  });

  it('calls requests sent back from a full room back once nothing waits here, the heavier tier first', async () => {
    const long = { deadline: 3_600_000, estimate: 10_000 };
    const { clock, ask, end } = await fullRoomOfTwo(long);
    const recalled: string[] = [];
    const sendBack = async (tier: string) => {
      const v = await ask(tier, 't', 'a', long);
      if (v.kind !== 'suspend' || !v.onRecallable) throw new Error(`expected a recallable Suspend, got ${v.kind}`);
      // As the engine does once the pause is in place.
      v.onRecallable(async () => (recalled.push(tier), true));
    };
    await sendBack('offline');
    await sendBack('batch');
    await clock.advance(1_000);
    expect(recalled, 'the room is still full').toEqual([]);
    // The calls end and the two waiters start: nothing waits here, two slots are free.
    await end();
    await clock.advance(1);
    expect(recalled).toEqual(['batch', 'offline']);
  });

  it('does not call back a request due back within RECALL_WORTH_MS', async () => {
    const { clock, ask, end } = await fullRoomOfTwo();
    const recalled: number[] = [];
    const v = await ask('batch');
    if (v.kind !== 'suspend' || !v.onRecallable) throw new Error(`expected a recallable Suspend, got ${v.kind}`);
    v.onRecallable(async () => (recalled.push(1), true));
    await clock.advance(Math.max(0, v.ms - RECALL_WORTH_MS + 1));
    await end();
    await clock.advance(1);
    expect(recalled).toEqual([]);
  });

  it('beside another dispatcher, sends back for its share of the starts, read as at least half', async () => {
    // Two dispatchers share one store and 8 slots. The waiters here start at this dispatcher's
    // share of the starts; a share of one call in eight is read as half, not as an eighth.
    const { clock, ask: here, flowControl, askOf } = setup({ slots: 8, maxWaiting: 2 });
    const there = askOf(flowControl(8));
    // 100 tokens in 333 ms: 3.3 ms a token, here (and calls use what they ask).
    const learn = granted(await here('batch'));
    await clock.advance(333);
    await learn.release(out(100));
    const mine = granted(await here('batch'));
    const asked = Array.from({ length: 7 }, () => there('batch'));
    await clock.advance(1);
    const theirs = await Promise.all(asked);
    const waiting = [here('batch'), here('batch')];
    await clock.advance(1);
    const back = await here('batch');
    if (back.kind !== 'suspend') throw new Error(`expected a Suspend, got ${JSON.stringify(back)}`);
    // 200 tokens waiting here at 3.3 ms a token over half of the 8 slots: 167 ms (over all 8,
    // 83 ms: back too soon to a room still full; over this one call, 667 ms). In whole ms, as
    // the broker's Suspend takes them and a trace shows them.
    expect(back.ms).toBe(167);
    await mine.release(out(100));
    for (const v of theirs) await granted(v).release(out(100));
    for (const w of waiting)
      void w.then(async (v) => {
        if (v.kind === 'granted') await v.grant.release(out(100));
      });
    await clock.advance(1);
  });

  it('answers expired when the deadline passes while it waits', async () => {
    const { clock, ask } = setup({ slots: 1 });
    const holder = granted(await ask('batch'));
    const waiting = ask('batch', 't', 'a', { deadline: clock.now() + 500 });
    await clock.advance(600);
    expect(await waiting).toEqual({ kind: 'expired' });
    await holder.release(out(100));
  });
});

describe('flow control, a waiter that leaves while the gate answers', () => {
  it('is counted out once: the slot goes back and later asks are still granted', async () => {
    const clock = new VirtualClock(0);
    const raw = basePolicy();
    raw.models.m!.slots = 8;
    const policy = parsePolicy(raw);
    const embedded = createEmbeddedStore(clock);
    // The store answers the first slot request only when the test says so.
    let answer: (() => void) | undefined;
    let first = true;
    const store = Object.create(embedded) as typeof embedded;
    store.acquireSlot = async (request) => {
      if (first) {
        first = false;
        await new Promise<void>((resolve) => (answer = resolve));
      }
      return embedded.acquireSlot(request);
    };
    let n = 0;
    const flows = createFlowControl({
      clock,
      store,
      policy: () => policy,
      newId: () => `lease-${n++}`,
      options: { leaseMs: 60_000, minSuspendMs: 50, maxWaiting: 64 },
    });
    const ask = (deadlineIn: number) =>
      flows.ask({
        flow: { tier: 'batch', tenant: 't', account: 'a' },
        model: 'm',
        deadline: clock.now() + deadlineIn,
        estimate: 100,
        promptEstimate: 0,
        liteTopic: 'lt',
      });

    const leaving = ask(100);
    await clock.advance(1);
    expect(answer, 'the gate is being asked').toBeDefined();
    // Its deadline passes while the gate has not answered yet.
    await clock.advance(200);
    expect((await leaving).kind).toBe('expired');
    answer!();
    await clock.advance(1);
    expect(flows.waiting()).toBe(0);

    const later = await Promise.all([ask(60_000), ask(60_000)]);
    expect(later.map((v) => v.kind)).toEqual(['granted', 'granted']);
    expect(flows.waiting()).toBe(0);
  });
});

describe('fair-share reports', () => {
  /**
   * Two slots whose calls took 1 s: 600 starts within batch's 300 s. Three flows wait, one
   * request each here, their LiteTopics holding `depth` each (their reservoirs).
   */
  async function waitingFlows(
    depth: number,
    holdMs = 600_000,
    options: Parameters<typeof setup>[0] = {},
    /** Requests also waiting here from the start, by tenant and place in its reservoir. */
    placed: readonly (readonly [string, string])[] = [],
  ) {
    const t = setup({ slots: 2, ...options });
    const { clock, store, ask } = t;
    const first = await Promise.all([ask('batch'), ask('batch')]);
    await clock.advance(1_000);
    for (const v of first) await granted(v).release(out(100));
    const busy = await Promise.all([ask('batch'), ask('batch')]);
    const keys = ['x', 'y', 'z'].map((tenant) => reservoirKey(tenant, `batch.${tenant}.m`));
    for (const key of keys)
      for (let i = 0; i < depth; i++)
        await store.admit({ limits: [], reservoir: { key, max: 10_000, member: `${i}`.padStart(4, '0'), holdMs } });
    const waiting = keys.map((reservoir, i) => ask('batch', ['x', 'y', 'z'][i], 'a', { reservoir }));
    const held = placed.map(([tenant, place]) =>
      ask('batch', tenant, 'a', { reservoir: reservoirKey(tenant, `batch.${tenant}.m`), place }),
    );
    await clock.advance(2_000);
    const reports = await store.readMembers(fairShareKey('m', 'batch'), FAIR_SHARE_TTL_MS);
    return { ...t, busy, waiting, held, reports };
  }

  it('tells the edge the level an over-committed tier fills its flows to', async () => {
    const { reports } = await waitingFlows(400);
    expect(reports).toHaveLength(1);
    // 1,200 held, 600 start in time: 200 each, one round of 3 flows every 1.5 s.
    const share = bestReport(reports.map((r) => r.value))!;
    expect(share.cap).toBe(200);
    expect(share.rate).toBeCloseTo(2 / 3);
  });

  it('says nothing while what the flows hold starts within the wait', async () => {
    const { reports } = await waitingFlows(150);
    expect(reports).toEqual([]);
  });

  it('sheds the places a flow cannot start before they lapse, and has them answered', async () => {
    const shed: Shed[] = [];
    const { store } = await waitingFlows(400, 300_000, { onShed: async (s) => (shed.push(s), s.ids) });
    // At the first report 299 s are left for every place: with the margin, 2 slots start 1.25 x 598
    // = 747 calls, 249 a flow. Each LiteTopic keeps its first 249 places and the 151 after them are
    // shed; a second later 248 fit, and one more goes.
    const ids = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => `${from + i}`.padStart(4, '0'));
    expect(shed.map((s) => [s.tenant, s.ahead])).toEqual([
      ['x', 249],
      ['y', 249],
      ['z', 249],
      ['x', 248],
      ['y', 248],
      ['z', 248],
    ]);
    expect(shed.slice(0, 3).map((s) => s.ids)).toEqual([ids(249, 400), ids(249, 400), ids(249, 400)]);
    expect(shed.slice(3).map((s) => s.ids)).toEqual([ids(248, 249), ids(248, 249), ids(248, 249)]);
    for (const s of shed) expect(await store.reservoirDepth(s.reservoir)).toBe(248);
  });

  it('lets a shed request held here go unserved once its client is answered, and keeps one whose answer failed', async () => {
    const answered: string[] = [];
    // Places past the level, and one at the head, held here when the first report sheds.
    const { held, clock } = await waitingFlows(
      400,
      300_000,
      // x's answers fail to be written; the others land.
      { onShed: async (s) => (s.tenant === 'x' ? [] : (answered.push(...s.ids), s.ids)) },
      [
        ['y', '0300'],
        ['x', '0300'],
        ['z', '0000'],
      ],
    );
    const [late, lateUnanswered, head] = held;
    expect(answered).toContain('0300');
    expect((await late!).kind).toBe('shed');
    let settled = false;
    for (const v of [lateUnanswered!, head!]) void v.then(() => (settled = true));
    await clock.advance(1);
    expect(settled, 'the unanswered one and the head still wait for a slot').toBe(false);
  });

  it('sheds nothing where places start in time, or where the tier refuses nothing at the level', async () => {
    const shed: Shed[] = [];
    // The same flows with twice the time left: every place starts in time, though a level stands.
    const { reports } = await waitingFlows(400, 600_000, { onShed: async (s) => (shed.push(s), s.ids) });
    expect(reports).toHaveLength(1);
    await waitingFlows(400, 300_000, { onShed: async (s) => (shed.push(s), s.ids), fairShareAtAdmission: false });
    expect(shed).toEqual([]);
  });
});
