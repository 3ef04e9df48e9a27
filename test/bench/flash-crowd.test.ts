/**
 * Traffic none of the lab's scenarios has: one realtime tenant's flash crowd, far over the
 * tier's share, beside steady realtime tenants and a batch trickle. The crowd is slowed and
 * refused; the steady tenants are served as if it were not there.
 */
import { expect, it } from 'vitest';
import { createRng } from '../../bench/lib/rng.js';
import { runSluice } from '../../bench/lib/systems.js';
import { burst, merge, poisson } from '../../bench/lib/trace.js';
import { replayWorld } from '../../bench/scenarios/replay.js';

function flashCrowd(seed: number) {
  const rng = createRng(seed);
  const accounts = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
  const steady = poisson(
    { rng: rng.fork('steady'), accounts: accounts('rt', 10), model: 'm', tokens: (r) => r.int(30, 200) },
    1,
    0,
    90_000,
  ).map((e) => ({ ...e, tier: 'realtime', tenant: `steady${Number(e.account.slice(2)) % 5}` }));
  const crowd = burst(
    { rng: rng.fork('crowd'), accounts: accounts('fl', 5), model: 'm', tokens: (r) => r.int(30, 200) },
    600,
    20_000,
    30_000,
  ).map((e) => ({ ...e, tier: 'realtime', tenant: 'crowd' }));
  const batch = poisson(
    { rng: rng.fork('batch'), accounts: ['b0', 'b1'], model: 'm', tokens: (r) => r.int(100, 600) },
    0.5,
    0,
    90_000,
  ).map((e) => ({ ...e, tier: 'batch', tenant: 'batch' }));
  return replayWorld({ trace: merge(steady, crowd, batch), flags: { 'gpu-slots': '8' } });
}

it.each([1, 2, 3])(
  'a realtime flash crowd of one tenant leaves the steady realtime tenants all served (seed %i)',
  { timeout: 120_000 },
  async (seed) => {
    const run = await runSluice(flashCrowd(seed));
    const byTenant = new Map<string, { sent: number; ok: number }>();
    for (const a of run.recorder.attempts) {
      const t = byTenant.get(a.tenant) ?? { sent: 0, ok: 0 };
      t.sent++;
      if (a.status !== undefined && a.status >= 200 && a.status < 300) t.ok++;
      byTenant.set(a.tenant, t);
    }
    const share = (t: string) => byTenant.get(t)!.ok / byTenant.get(t)!.sent;
    console.log(`flash crowd, seed ${seed}: ${JSON.stringify(Object.fromEntries(byTenant))}`);
    // The crowd asks for several times what the GPU has: most of it is refused or expires.
    expect(share('crowd')).toBeLessThan(0.8);
    // Before the room kept a place for every account and counted the work ahead in fair order,
    // every seed here failed this. What is left: now and then an account's second request,
    // sent back while its first holds its place, returns too late.
    const steady = [...byTenant].filter(([t]) => t.startsWith('steady')).map(([, v]) => v);
    const served = steady.reduce((n, v) => n + v.ok, 0) / steady.reduce((n, v) => n + v.sent, 0);
    expect(served).toBeGreaterThanOrEqual(0.98);
    for (const [t] of byTenant) if (t.startsWith('steady')) expect(share(t), t).toBeGreaterThanOrEqual(0.9);
    expect(share('batch')).toBe(1);
  },
);
