import { afterEach, describe, expect, inject, it } from 'vitest';
import type { LocalSluice } from '../../../functions/local/sluice.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createGuardedStore, type FailureMode } from '../../../lib/store/guarded.js';
import { connectRedis, createTcpStore } from '../../../lib/store/redis/tcp.js';
import { attachRedisServer } from '../../../scripts/redis/server.js';
import { chat, KEYS, startTestSluice } from '../../support/local-sluice.js';

let sluice: LocalSluice | undefined;
const redis = () => attachRedisServer(inject('redisPort'), inject('redisDir'), () => {});
afterEach(async () => {
  await sluice?.close();
  sluice = undefined;
  // Whatever a test did, leave Redis up for the next one.
  if (!(await fetchPing())) await redis().start();
});

async function fetchPing(): Promise<boolean> {
  const { ping } = await import('../../../scripts/redis/server.js');
  return ping(inject('redisPort'));
}

async function sluiceOnRedis(mode: FailureMode) {
  const client = await connectRedis(inject('redisUrl'), 200);
  const store = createGuardedStore({
    primary: await createTcpStore({ redis: client }),
    clock: systemClock,
    mode,
    timeoutMs: 200,
    probeIntervalMs: 200,
  });
  guarded = store;
  return startTestSluice({ store });
}
let guarded: ReturnType<typeof createGuardedStore> | undefined;

async function statuses(s: LocalSluice, n: number): Promise<number[]> {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await s.app.request('/v1/chat/completions', chat(KEYS.a1))).status);
  return out;
}

describe('edge while Redis is stopped mid-run', () => {
  it('fail-open (default): keeps answering 200 on the local limiter, never 5xx, and goes back to Redis by itself', async () => {
    sluice = await sluiceOnRedis('fail-open');
    expect(await statuses(sluice, 3)).toEqual([200, 200, 200]);
    await redis().stop();
    const during = await statuses(sluice, 5);
    expect(during.every((s) => s < 500)).toBe(true);
    expect(during.filter((s) => s === 200).length).toBeGreaterThan(0);
    await redis().start();
    await new Promise((r) => setTimeout(r, 600));
    expect(await statuses(sluice, 3)).toEqual([200, 200, 200]);
    expect(guarded!.stats()).toMatchObject({ healthy: true });
    expect(guarded!.stats().degraded).toBeGreaterThan(0);
  });

  it('fail-closed: 503 with Retry-After while it is away, never another 5xx, then recovers by itself', async () => {
    sluice = await sluiceOnRedis('fail-closed');
    expect(await statuses(sluice, 2)).toEqual([200, 200]);
    await redis().stop();
    const res = await sluice.app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('limiter_unavailable');
    await redis().start();
    let recovered = false;
    for (let i = 0; i < 50 && !recovered; i++) {
      recovered = (await sluice.app.request('/v1/chat/completions', chat(KEYS.a1))).status === 200;
      if (!recovered) await new Promise((r) => setTimeout(r, 100));
    }
    expect(recovered).toBe(true);
  });
});
