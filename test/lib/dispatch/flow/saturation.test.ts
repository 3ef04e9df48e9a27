import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../../functions/gpu-sim/app.js';
import { VirtualClock } from '../../../../lib/clock/virtual-clock.js';
import { createModelCapacity, nextCapacity, type CapacityState } from '../../../../lib/dispatch/flow/saturation.js';
import { encodeEnvelope, type Envelope } from '../../../../lib/envelope.js';
import { Saturation, parsePolicy } from '../../../../lib/policy/schema.js';
import { VLLM_METRICS } from '../../../../lib/upstream/engine-metrics.js';
import { basePolicy } from '../../policy/fixtures.js';
import { dispatcherOnSim } from '../on-sim.js';

const settings = Saturation.parse({ probeAfterMs: 10_000 });
const at = (slots: number, saturatedAt = -Infinity): CapacityState => ({ slots, saturatedAt });
const load = (running: number, waiting = 0, kvCacheUsage = 0) => ({ running, waiting, kvCacheUsage });

describe("slots from the servers' metrics: the rule", () => {
  it('gives a server that queues inside itself as many slots as it runs', () => {
    expect(nextCapacity(at(16), load(8, 8), true, 1_000, 16, settings)).toEqual({
      state: at(8, 1_000),
      reason: 'engine-queue',
    });
  });

  it('tolerates the engine queue up to its threshold', () => {
    const s = { ...settings, queueDepthThreshold: 2 };
    expect(nextCapacity(at(10), load(10, 2), true, 1_000, 10, s)).toEqual({ state: at(10) });
    expect(nextCapacity(at(13), load(10, 3), true, 1_000, 10, s)).toEqual({
      state: at(12, 1_000),
      reason: 'engine-queue',
    });
  });

  it('takes one slot away from a server near preempting (KV cache past its threshold)', () => {
    expect(nextCapacity(at(8), load(8, 0, 0.85), true, 1_000, 8, settings)).toEqual({
      state: at(7, 1_000),
      reason: 'kv-cache',
    });
  });

  it('probes one slot up while the slots hold work back and the server has room, not within probeAfterMs of saturation', () => {
    expect(nextCapacity(at(8), load(8), true, 1_000, 8, settings)).toEqual({ state: at(9), reason: 'probe' });
    expect(nextCapacity(at(8), load(8, 1), true, 1_000, 8, { ...settings, queueDepthThreshold: 1 })).toEqual({
      state: at(8),
    });
    expect(nextCapacity(at(8, 0), load(8), true, 9_999, 8, settings).reason).toBeUndefined();
    expect(nextCapacity(at(8, 0), load(8), true, 10_000, 8, settings).reason).toBe('probe');
  });

  it('holds the slots while they held no work back', () => {
    expect(nextCapacity(at(8), load(8), false, 1_000, 8, settings)).toEqual({ state: at(8) });
  });

  it('stays within minSlots and maxSlots (4 x the declared slots when unset)', () => {
    expect(nextCapacity(at(32), load(32), true, 1_000, 8, settings).state.slots).toBe(32);
    expect(nextCapacity(at(10), load(10), true, 1_000, 8, { ...settings, maxSlots: 10 }).state.slots).toBe(10);
    expect(nextCapacity(at(2), load(0, 5), true, 1_000, 8, { ...settings, minSlots: 2 }).state.slots).toBe(2);
  });

  it('falls back to at most the declared slots when the metrics cannot be read', () => {
    expect(nextCapacity(at(20), undefined, true, 1_000, 8, settings)).toEqual({ state: at(8), reason: 'unreadable' });
    expect(nextCapacity(at(5), undefined, true, 1_000, 8, settings)).toEqual({ state: at(5) });
  });
});

describe("slots from the servers' metrics: reading them", () => {
  const page = (running: number, waiting: number) =>
    `${VLLM_METRICS.running} ${running}\n${VLLM_METRICS.waiting} ${waiting}\n`;
  const model = (over: object = {}) =>
    parsePolicy({
      ...basePolicy(),
      models: { m: { slots: 4, upstreams: ['http://a/v1', 'http://b/v1'], saturation: { refreshMs: 1_000, ...over } } },
    }).models.m!;

  it('reads every server of the model once per refreshMs while the model is asked for, and not after', async () => {
    const clock = new VirtualClock(0);
    const scraped: string[] = [];
    const capacity = createModelCapacity({ clock, scrape: async (url) => (scraped.push(url), page(2, 1)) });
    const m = model();
    expect(capacity.slots('m', m)).toBe(4);
    await clock.advance(0);
    expect(scraped).toEqual(['http://a/v1', 'http://b/v1']);
    // a: 2 running, 1 waiting; b the same: 4 running and 2 waiting in all, so one slot fewer than the 4 given.
    expect(capacity.slots('m', m)).toBe(3);
    await clock.advance(999);
    expect(capacity.slots('m', m)).toBe(3);
    expect(scraped).toHaveLength(2);
    // Asked since the last read: read once more at its refreshMs, then no more while nobody asks.
    await clock.advance(10_000);
    expect(scraped).toHaveLength(4);
    capacity.slots('m', m);
    expect(scraped).toHaveLength(6);
  });

  it('sets the slots from what the servers run and says why', async () => {
    const clock = new VirtualClock(0);
    const changes: unknown[] = [];
    let pages = [page(4, 0), page(4, 0)];
    const capacity = createModelCapacity({
      clock,
      scrape: async (url) => pages[url.includes('//a/') ? 0 : 1]!,
      onChange: (...c) => changes.push(c),
    });
    const m = model({ maxSlots: 32, probeAfterMs: 3_000 });
    /** The slots as the scheduler sees them, then a read; `full`: requests waited on a full gate before it. */
    const read = async (full = true) => {
      if (full) capacity.full('m');
      const slots = capacity.slots('m', m);
      await clock.advance(1_000);
      return slots;
    };
    // Nothing held back: the slots stay, however much the servers run.
    expect([await read(false), await read(false)]).toEqual([4, 4]);
    // Held back, with room at the servers: one more per read.
    expect([await read(), await read()]).toEqual([4, 5]);
    pages = [page(3, 2), page(3, 0)];
    expect(await read()).toBe(6);
    pages = [page(3, 0), page(3, 0)];
    // 6 running, 2 waiting: one fewer than the 6 given; then no probe for probeAfterMs (3 reads).
    expect([await read(), await read(), await read(), await read()]).toEqual([5, 5, 5, 6]);
    expect(changes).toEqual([
      ['m', 5, 'probe'],
      ['m', 6, 'probe'],
      ['m', 5, 'engine-queue'],
      ['m', 6, 'probe'],
      ['m', 7, 'probe'],
    ]);
  });

  it("falls back to the declared slots and reports the error when a server's page cannot be read", async () => {
    const clock = new VirtualClock(0);
    const errors: unknown[] = [];
    const changes: unknown[] = [];
    let broken = false;
    const capacity = createModelCapacity({
      clock,
      scrape: async (url) => {
        if (broken && url.includes('//b/')) throw new Error('connect ECONNREFUSED');
        return page(5, 0);
      },
      onChange: (...c) => changes.push(c),
      onError: (_m, e) => errors.push(String(e)),
    });
    const m = model({ maxSlots: 16, probeAfterMs: 0 });
    capacity.slots('m', m);
    for (let i = 0; i < 3; i++) {
      await clock.advance(1_000);
      capacity.full('m');
      capacity.slots('m', m);
    }
    await clock.advance(1_000);
    expect(capacity.slots('m', m)).toBe(7);
    broken = true;
    await clock.advance(1_000);
    capacity.slots('m', m);
    await clock.advance(0);
    expect(capacity.slots('m', m)).toBe(4);
    expect(errors).toEqual(['Error: connect ECONNREFUSED']);
    expect(changes).toEqual([
      ['m', 5, 'probe'],
      ['m', 6, 'probe'],
      ['m', 7, 'probe'],
      ['m', 4, 'unreadable'],
    ]);
  });

  it('leaves a model without saturation at its declared slots and never reads its servers', () => {
    const clock = new VirtualClock(0);
    let scraped = 0;
    const capacity = createModelCapacity({ clock, scrape: async () => (scraped++, '') });
    const m = parsePolicy(basePolicy()).models.m!;
    expect(capacity.slots('m', m)).toBe(8);
    expect(scraped).toBe(0);
  });
});

describe("slots from the servers' metrics: a dispatcher against the simulated GPU", () => {
  function world(declared: number, gpuSlots: number, saturation = true) {
    const clock = new VirtualClock(1_000_000);
    const raw = basePolicy();
    raw.models.m = {
      slots: declared,
      upstreams: ['http://gpu/v1'],
      ...(saturation ? { saturation: { refreshMs: 500, probeAfterMs: 5_000 } } : {}),
    };
    // Pace and reservoir out of the way: only slots decide when a request starts.
    raw.defaults = {
      accountModel: { rpm: 1_000_000, tpm: 1_000_000_000, rate: 10_000, burst: 10_000 },
      tenantModel: { rpm: 1_000_000, tpm: 1_000_000_000 },
      tenant: { rpm: 1_000_000, tpm: 1_000_000_000 },
    };
    const policy = parsePolicy(raw);
    const gpu = createGpuSim({
      clock,
      models: ['m'],
      slots: gpuSlots,
      baseTokenMs: 100,
      minOutputTokens: 10,
      maxOutputTokens: 10,
    });
    const { dispatch, events } = dispatcherOnSim({ clock, gpu, policy, options: { flow: { maxWaiting: 64 } } });
    let ids = 0;
    /** Keeps `inFlight` requests at the dispatcher, as a busy LiteTopic would, until `untilMs`. */
    async function load(inFlight: number, untilMs: number) {
      const end = clock.now() + untilMs;
      const one = async (): Promise<void> => {
        while (clock.now() < end) {
          const e: Envelope = {
            id: `req_${ids++}`,
            account: 'svc1',
            tenant: 'acme',
            tier: 'batch',
            model: 'm',
            liteTopic: 'batch-acme-m',
            operation: 'chat.completions',
            body: { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
            mode: 'sync',
            enqueuedAt: clock.now(),
            deadline: clock.now() + 600_000,
            tokenEstimate: 20,
            charged: [],
            paceFactor: 1,
          };
          const out = await dispatch({ messageId: e.id, liteTopic: e.liteTopic, body: encodeEnvelope(e), attempt: 1 });
          if (out.kind === 'suspend') await new Promise<void>((r) => clock.setTimer(out.ms, r));
        }
      };
      let done = 0;
      const clients = Array.from({ length: inFlight }, () => one().then(() => void done++));
      await clock.advance(untilMs);
      // What is in flight at the end finishes on the clock too.
      for (let i = 0; i < 120 && done < inFlight; i++) await clock.advance(1_000);
      await Promise.all(clients);
    }
    return { clock, gpu, events, load };
  }

  it('finds the slots a GPU has beyond the declared ones and fills them', async () => {
    const declaredOnly = world(2, 6, false);
    await declaredOnly.load(16, 60_000);
    const w = world(2, 6);
    await w.load(16, 60_000);
    const slots = w.events.flatMap((e) => (e.type === 'capacity' ? [e.slots] : []));
    expect(slots.slice(0, 4)).toEqual([3, 4, 5, 6]);
    expect(Math.max(...slots)).toBe(7);
    expect(w.gpu.stats().peakBusy).toBe(6);
    // Every probe past 6 queues one request inside the GPU, one at a time.
    expect(w.gpu.stats().peakQueue).toBe(1);
    expect(declaredOnly.gpu.stats().peakBusy).toBe(2);
    // Three times the slots, not three times the answers: each call slows as the GPU fills (its contention).
    expect(w.gpu.stats().served).toBeGreaterThan(1.5 * declaredOnly.gpu.stats().served);
  });

  it('comes down to the slots a GPU has when the declared ones are too many', async () => {
    const declaredOnly = world(12, 4, false);
    await declaredOnly.load(16, 30_000);
    const w = world(12, 4);
    await w.load(16, 30_000);
    const capacity = w.events.filter((e) => e.type === 'capacity');
    expect(capacity[0]).toMatchObject({ slots: 4, reason: 'engine-queue' });
    expect(w.gpu.stats().peakBusy).toBe(4);
    // Queued inside the GPU: 8 (12 given to 4 slots) until the first read, against 8 all along without it.
    expect(declaredOnly.gpu.stats().peakQueue).toBe(8);
    expect(w.gpu.stats().queueLength).toBe(0);
  });
});
