/**
 * The guarded store on real Redis: known denials answered without a round
 * trip, and redis-server stopped (or paused) mid-run — callers see decisions
 * or, in fail-closed mode, StoreUnavailableError, never a raw error, never a
 * hang, and the store recovers by itself once Redis is back.
 */
import { randomUUID } from 'node:crypto';
import { Redis as UpstashRedis } from '@upstash/redis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { attachRedisServer, ping, rawCommand } from '../../../scripts/redis/server.ts';
import type { Clock } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createGuardedStore, StoreUnavailableError, type GuardLogger } from '../../../lib/store/guarded.js';
import { windowKey } from '../../../lib/store/keys.js';
import { createTcpStore } from '../../../lib/store/redis/tcp.js';
import { createUpstashStore } from '../../../lib/store/redis/upstash.js';
import type { AdmitDecision, RateStore, WindowLimit } from '../../../lib/store/types.js';

const redis = attachRedisServer(inject('redisPort'), inject('redisDir'));
const uid = () => randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wallClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const h = setTimeout(fn, ms);
    return () => clearTimeout(h);
  },
};

function limit(
  tenant: string,
  n: number,
  windowMs = 60_000,
  unit: 'requests' | 'tokens' = 'requests',
  cost = 1,
): WindowLimit {
  return {
    key: windowKey({ kind: 'tenant', tenant }, unit, windowMs),
    scope: 'tenant',
    unit,
    limit: n,
    windowMs,
    cost,
  };
}

/** Counts the calls that reach the shared store. */
function counting(store: RateStore): RateStore & { admits: number } {
  const wrapped = {
    admits: 0,
    ...store,
    admit: (input: Parameters<RateStore['admit']>[0]) => {
      wrapped.admits++;
      return store.admit(input);
    },
  };
  return wrapped;
}

function recordingLog(): GuardLogger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, warn: (_f, m) => lines.push(`warn ${m}`), info: (_f, m) => lines.push(`info ${m}`) };
}

async function ensureRedisUp(): Promise<void> {
  if (!(await ping(redis.port))) await redis.start();
}

afterAll(ensureRedisUp);

describe('denial cache', () => {
  it('answers a known refusal locally until the window resets', async () => {
    const clock = new VirtualClock(1_000);
    const primary = counting(await createTcpStore({ url: inject('redisUrl'), clock }));
    const store = createGuardedStore({ primary, clock });
    const t = `t-${uid()}`;
    const l = limit(t, 2);
    expect((await store.admit({ limits: [l] })).allowed).toBe(true);
    // Leaves the window exhausted: known without asking again.
    expect((await store.admit({ limits: [l] })).allowed).toBe(true);
    const refused = await store.admit({ limits: [l] });
    const again = await store.admit({ limits: [l] });
    const more = await store.admit({ limits: [l, limit(`${t}-other`, 5)] });
    expect(primary.admits).toBe(2);
    expect(store.stats().cachedDenials).toBe(3);
    for (const d of [refused, again, more] as AdmitDecision[]) {
      expect(d.allowed).toBe(false);
      if (!d.allowed) {
        expect(d.deniedBy).toEqual({ scope: 'tenant', unit: 'requests' });
        expect(d.retryAfterMs).toBe(59_000);
      }
    }
    expect(again.windows).toEqual(refused.windows);
    // Another scope is not affected.
    expect((await store.admit({ limits: [limit(`${t}-other`, 5)] })).allowed).toBe(true);
    expect(primary.admits).toBe(3);
    // Raising the limit makes the cached refusal moot.
    expect((await store.admit({ limits: [{ ...l, limit: 3 }] })).allowed).toBe(true);
    expect(primary.admits).toBe(4);
    // After the reset the store decides again.
    await clock.advance(59_000);
    expect((await store.admit({ limits: [l] })).allowed).toBe(true);
    expect(primary.admits).toBe(5);
    await store.close();
  });

  it('refuses locally only what cannot fit; smaller token costs still ask the store; refunds evict', async () => {
    const clock = new VirtualClock(0);
    const primary = counting(await createTcpStore({ url: inject('redisUrl'), clock }));
    const store = createGuardedStore({ primary, clock });
    const tokens = limit(`t-${uid()}`, 1000, 60_000, 'tokens', 900);
    const first = await store.admit({ limits: [tokens] });
    expect(first.allowed).toBe(true);
    expect((await store.admit({ limits: [{ ...tokens, cost: 500 }] })).allowed).toBe(false);
    expect((await store.admit({ limits: [{ ...tokens, cost: 500 }] })).allowed).toBe(false);
    expect(primary.admits).toBe(2);
    expect((await store.admit({ limits: [{ ...tokens, cost: 100 }] })).allowed).toBe(true);
    expect(primary.admits).toBe(3);
    await store.reconcile([{ key: tokens.key, windowStart: first.windows[0]!.windowStart, delta: -800 }]);
    expect((await store.admit({ limits: [{ ...tokens, cost: 500 }] })).allowed).toBe(true);
    expect(primary.admits).toBe(4);
    await store.close();
  });
});

type Outcome = { ms: number; allowed?: boolean; error?: unknown };

/** Admits every `everyMs` for `totalMs`, running `events` at their offsets; records every outcome. */
async function drive(
  store: RateStore,
  l: WindowLimit,
  totalMs: number,
  everyMs: number,
  events: [number, () => Promise<void>][],
) {
  const outcomes: Outcome[] = [];
  const started = Date.now();
  const pending = [...events];
  const calls: Promise<void>[] = [];
  while (Date.now() - started < totalMs) {
    const t = Date.now() - started;
    while (pending.length && pending[0]![0] <= t) await pending.shift()![1]();
    const t0 = performance.now();
    calls.push(
      store.admit({ limits: [l] }).then(
        (d) => void outcomes.push({ ms: performance.now() - t0, allowed: d.allowed }),
        (error: unknown) => void outcomes.push({ ms: performance.now() - t0, error }),
      ),
    );
    await sleep(everyMs);
  }
  await Promise.all(calls);
  return outcomes;
}

const transports: [string, () => Promise<RateStore>][] = [
  ['TCP', () => createTcpStore({ url: inject('redisUrl') })],
  [
    'Upstash REST',
    async () =>
      createUpstashStore({
        redis: new UpstashRedis({
          url: inject('upstashUrl'),
          token: inject('upstashToken'),
          enableTelemetry: false,
          retry: false,
        }),
      }),
  ],
];

describe.each(transports)('Redis stopped mid-run, over %s', (_name, make) => {
  it('fails open onto the per-instance limiter, never throws or hangs, and recovers by itself', async () => {
    await ensureRedisUp();
    const log = recordingLog();
    const primary = await make();
    const store = createGuardedStore({
      primary,
      clock: wallClock,
      mode: 'fail-open',
      timeoutMs: 200,
      probeIntervalMs: 150,
      log,
    });
    const l = limit(`t-${uid()}`, 1_000_000);
    const outcomes = await drive(store, l, 2_500, 5, [
      [500, () => redis.stop()],
      [1_300, () => redis.start()],
    ]);
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    expect(outcomes.every((o) => o.allowed)).toBe(true);
    // Bounded by the timeout, not by the client's own retries or connect timeouts
    // (seconds); the margin is for a loaded CI machine's event loop.
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(200 + 500);
    const stats = store.stats();
    expect(stats.degraded).toBeGreaterThan(10);
    expect(stats.healthy).toBe(true);
    // Logged once per transition, ending recovered.
    expect(log.lines[0]).toBe('warn rate store unusable; degrading');
    expect(log.lines.at(-1)).toBe('info rate store recovered');
    log.lines.forEach((line, i) => expect(line.startsWith(i % 2 ? 'info' : 'warn')).toBe(true));
    // Back on Redis: its counter moves again.
    const before = stats.primary;
    await store.admit({ limits: [l] });
    expect(store.stats().primary).toBe(before + 1);
    await store.close();
  });

  it('fails closed with StoreUnavailableError and a retry hint, then recovers by itself', async () => {
    await ensureRedisUp();
    const primary = await make();
    const store = createGuardedStore({
      primary,
      clock: wallClock,
      mode: 'fail-closed',
      timeoutMs: 200,
      probeIntervalMs: 150,
    });
    const l = limit(`t-${uid()}`, 1_000_000);
    expect((await store.admit({ limits: [l] })).allowed).toBe(true);
    await redis.stop();
    const errors: unknown[] = [];
    for (let i = 0; i < 5; i++) await store.admit({ limits: [l] }).catch((e: unknown) => errors.push(e));
    expect(errors).toHaveLength(5);
    for (const e of errors) {
      expect(e).toBeInstanceOf(StoreUnavailableError);
      expect((e as StoreUnavailableError).retryAfterMs).toBeGreaterThan(0);
    }
    await redis.start();
    const deadline = Date.now() + 3_000;
    let ok = false;
    while (!ok && Date.now() < deadline) {
      ok = await store.admit({ limits: [l] }).then(
        (d) => d.allowed,
        () => false,
      );
      if (!ok) await sleep(50);
    }
    expect(ok).toBe(true);
    expect(store.stats().healthy).toBe(true);
    await store.close();
  });
});

describe('Redis hanging', () => {
  it('times out within the budget, limits conservatively per instance, and recovers after the pause', async () => {
    await ensureRedisUp();
    const primary = await createTcpStore({ url: inject('redisUrl') });
    const store = createGuardedStore({
      primary,
      clock: wallClock,
      timeoutMs: 100,
      probeIntervalMs: 100,
      fallbackLimitFactor: 0.25,
    });
    const l = limit(`t-${uid()}`, 8);
    expect((await store.admit({ limits: [l] })).allowed).toBe(true);
    // Redis keeps the connection but answers nobody for 800 ms.
    await rawCommand(redis.port, ['CLIENT', 'PAUSE', '800', 'ALL']);
    const t0 = performance.now();
    const during = await Promise.all(Array.from({ length: 6 }, () => store.admit({ limits: [l] })));
    expect(performance.now() - t0).toBeLessThan(100 + 400);
    // 8 × 0.25 = 2 per window on this instance while Redis is unusable.
    expect(during.filter((d) => d.allowed)).toHaveLength(2);
    expect(store.stats().timeouts).toBeGreaterThan(0);
    await sleep(900);
    const deadline = Date.now() + 2_000;
    while (!store.stats().healthy && Date.now() < deadline) {
      await store.admit({ limits: [limit(`t-${uid()}`, 10)] });
      await sleep(20);
    }
    expect(store.stats().healthy).toBe(true);
    await store.close();
  });
});
