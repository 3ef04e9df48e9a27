/**
 * What the Redis stores promise beyond their decisions, checked on the wire
 * with MONITOR: one script call per operation (so one round trip), every key a
 * script touches passed in KEYS, a tenant's keys under one hash tag (proved on
 * a cluster-enabled redis-server, which refuses cross-slot scripts), and
 * EVALSHA falling back to EVAL once after the script cache is flushed.
 */
import { randomUUID } from 'node:crypto';
import { Redis as UpstashRedis } from '@upstash/redis';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startRedisServer } from '../../../scripts/redis/server.ts';
import { paceKey, reservoirKey, reservoirPlace, slotGateKey, windowKey } from '../../../lib/store/keys.js';
import { GC_SLACK_MS } from '../../../lib/store/redis/admit.js';
import { slotReclaimKey } from '../../../lib/store/redis/slot.js';
import { createTcpStore } from '../../../lib/store/redis/tcp.js';
import { createUpstashStore } from '../../../lib/store/redis/upstash.js';
import type { AdmitInput, RateStore } from '../../../lib/store/types.js';

const uid = () => randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Seen {
  readonly source: string;
  readonly args: readonly string[];
}

/** Records every command Redis executes, scripts' inner commands marked with source "lua". */
async function monitor(url: string): Promise<{ seen: Seen[]; stop: () => Promise<Seen[]> }> {
  const base = new Redis(url, { protocol: 2 });
  const mon = await base.monitor();
  const seen: Seen[] = [];
  mon.on('monitor', (_time: string, args: string[], source: string) => seen.push({ source, args }));
  return {
    seen,
    stop: async () => {
      // MONITOR output trails the commands slightly.
      await sleep(100);
      mon.disconnect();
      base.disconnect();
      return seen;
    },
  };
}

/** Top-level commands, each with the script-internal commands it ran. */
function calls(seen: readonly Seen[]): { args: readonly string[]; inner: Seen[] }[] {
  const out: { args: readonly string[]; inner: Seen[] }[] = [];
  for (const s of seen) {
    if (s.source === 'lua') out[out.length - 1]?.inner.push(s);
    else out.push({ args: s.args, inner: [] });
  }
  return out;
}

function tenantInput(t: string): AdmitInput {
  const minute = 60_000;
  return {
    limits: [
      {
        key: windowKey({ kind: 'account-model', tenant: t, account: 'a', model: 'm' }, 'requests', minute),
        scope: 'account-model',
        unit: 'requests',
        limit: 100,
        windowMs: minute,
        cost: 1,
      },
      {
        key: windowKey({ kind: 'account-model', tenant: t, account: 'a', model: 'm' }, 'tokens', minute),
        scope: 'account-model',
        unit: 'tokens',
        limit: 10_000,
        windowMs: minute,
        cost: 500,
      },
      {
        key: windowKey({ kind: 'tenant-model', tenant: t, model: 'm' }, 'tokens', minute),
        scope: 'tenant-model',
        unit: 'tokens',
        limit: 50_000,
        windowMs: minute,
        cost: 500,
      },
      {
        key: windowKey({ kind: 'tenant', tenant: t }, 'requests', minute),
        scope: 'tenant',
        unit: 'requests',
        limit: 1000,
        windowMs: minute,
        cost: 1,
      },
    ],
    reservoir: { key: reservoirKey(t, `batch.${t}.m`), max: 100, member: 'r1', holdMs: 60_000 },
  };
}

/** One of everything a RateStore does; returns how many store calls it made. */
async function exercise(store: RateStore): Promise<number> {
  const t = `t-${uid()}`;
  const input = tenantInput(t);
  const a = await store.admit(input);
  await store.admit(input);
  await store.reconcile(
    input.limits
      .filter((l) => l.unit === 'tokens')
      .map((l, i) => ({ key: l.key, windowStart: a.windows[0]!.windowStart, delta: i ? -100 : 50 })),
  );
  await store.leaveReservoir(reservoirPlace(input.reservoir!.key, 'r1'));
  await store.pace({ key: paceKey(t, `batch.${t}.m`), rate: 10, burst: 5 });
  const gate = {
    key: slotGateKey(`m-${uid()}`),
    capacity: 2,
    tiers: { realtime: { reserved: 2, lendable: 1 } },
    leaseMs: 10_000,
  };
  await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'l1' });
  await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'l2' });
  // Refused below its reservation: writes a reclaim mark, which the next grant clears.
  await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'l3' });
  await store.releaseSlot(gate.key, 'l2');
  await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'l4' });
  await store.releaseSlot(gate.key, 'l1');
  return 11;
}

const hashTag = (key: string) => /\{([^}]*)\}/.exec(key)?.[1];

const makers: [string, () => Promise<RateStore>][] = [
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

describe.each(makers)('Redis scripts over %s', (_name, make) => {
  it('makes one EVALSHA per operation, and scripts touch only their KEYS, all under one hash tag', async () => {
    const store = await make();
    await exercise(store); // loads every script
    const mon = await monitor(inject('redisUrl'));
    const n = await exercise(store);
    const seen = await mon.stop();
    const top = calls(seen);
    expect(top.map((c) => c.args[0]!.toLowerCase())).toEqual(Array(n).fill('evalsha'));
    for (const call of top) {
      const numKeys = Number(call.args[2]);
      const keys = call.args.slice(3, 3 + numKeys);
      expect(new Set(keys.map(hashTag)).size, JSON.stringify(keys)).toBe(1);
      expect(hashTag(keys[0]!)).toBeTruthy();
      for (const inner of call.inner) {
        if (inner.args[0]!.toUpperCase() === 'TIME') continue;
        // A release is announced on a channel, not a key; it carries the gate's hash tag all the same.
        if (inner.args[0]!.toUpperCase() === 'PUBLISH') {
          expect(hashTag(inner.args[1]!)).toBe(hashTag(keys[0]!));
          continue;
        }
        expect(keys, JSON.stringify(inner.args)).toContain(inner.args[1]);
      }
    }
    // The admission itself: four limits and a reservoir, read and charged inside that one call.
    const admission = top[0]!;
    expect(Number(admission.args[2])).toBe(5);
    expect(admission.inner.filter((c) => c.args[0]!.toUpperCase() === 'HSET')).toHaveLength(4);
    await store.close();
  });

  it('gives the reclaim marks a TTL past the latest mark, so they never linger', async () => {
    const store = await make();
    const gate = {
      key: slotGateKey(`m-${uid()}`),
      capacity: 1,
      tiers: { realtime: { reserved: 1, lendable: 1 } },
      leaseMs: 10_000,
    };
    expect((await store.acquireSlot({ ...gate, tier: 'batch', leaseId: 'b' })).granted).toBe(true);
    expect((await store.acquireSlot({ ...gate, tier: 'realtime', leaseId: 'r', reclaimMs: 5_000 })).granted).toBe(
      false,
    );
    const admin = new Redis(inject('redisUrl'), { protocol: 2 });
    const ttl = await admin.pttl(slotReclaimKey(gate.key));
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(5_000 + GC_SLACK_MS);
    admin.disconnect();
    await store.close();
  });

  it('falls back to EVAL once when Redis has lost its script cache', async () => {
    const store = await make();
    const t = `t-${uid()}`;
    await store.admit(tenantInput(t));
    const admin = new Redis(inject('redisUrl'), { protocol: 2 });
    await admin.script('FLUSH');
    const mon = await monitor(inject('redisUrl'));
    expect((await store.admit(tenantInput(t))).allowed).toBe(true);
    expect((await store.admit(tenantInput(t))).allowed).toBe(true);
    const top = calls(await mon.stop());
    expect(top.map((c) => c.args[0]!.toLowerCase())).toEqual(['evalsha', 'eval', 'evalsha']);
    admin.disconnect();
    await store.close();
  });
});

describe('on a cluster-enabled redis-server', () => {
  let server: Awaited<ReturnType<typeof startRedisServer>> | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it('runs every script within one slot, and a cross-tenant admission is refused as cross-slot', async () => {
    server = await startRedisServer({ extraArgs: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'] });
    const admin = new Redis(server.url, { protocol: 2 });
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    const deadline = Date.now() + 10_000;
    while (!String(await admin.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) {
      if (Date.now() > deadline) throw new Error('single-node cluster did not become ok');
      await sleep(50);
    }
    const store = await createTcpStore({ url: server.url });
    await exercise(store);
    const mixed = tenantInput(`t-${uid()}`);
    const other = tenantInput(`t-${uid()}`);
    await expect(store.admit({ limits: [mixed.limits[0]!, other.limits[0]!] })).rejects.toThrow(/CROSSSLOT|same slot/);
    await store.close();
    admin.disconnect();
  });
});
