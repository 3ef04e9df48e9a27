/**
 * Admission throughput and latency on one redis-server, in one run (issue 3):
 *   (a) Sluice admission, 6 windows + reservoir, over TCP
 *   (b) the same over the local Upstash-REST server
 *   (c) @upstash/ratelimit fixedWindow (one limit) over the same REST server
 *   (d) a raw EVALSHA of a trivial script over TCP: the floor
 *   (e) a cached denial (guarded store over TCP, window already exhausted)
 * Starts its own redis-server, and the REST server as a process of its own, as
 * Upstash is: in this process it would share one event loop with the clients
 * and charge (b) for the server's work too.
 * Throughput is measured with --concurrency calls in flight (default 32); latency
 * (p50, p99) one call at a time, where it is the latency a single request sees
 * rather than time spent queued behind the others.
 *   npx tsx bench/admission.ts [--ops 20000] [--concurrency 32]
 */
import { parseArgs } from 'node:util';
import { Ratelimit } from '@upstash/ratelimit';
import { Redis as UpstashRedis } from '@upstash/redis';
import { systemClock } from '../functions/runtime/system-clock.js';
import { windowKey, reservoirKey } from '../lib/store/keys.js';
import { createGuardedStore } from '../lib/store/guarded.js';
import { connectRedis, createTcpStore } from '../lib/store/redis/tcp.js';
import { createUpstashStore } from '../lib/store/redis/upstash.js';
import type { AdmitInput, RateStore, WindowLimit } from '../lib/store/types.js';
import { startRedisServer } from '../scripts/redis/server.js';
import { spawn, type ChildProcess } from 'node:child_process';

/** The Upstash-REST server in a child process; resolves with its URL. */
function startRestProcess(redisUrl: string, token: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'scripts/upstash-rest/main.ts', '--redis', redisUrl, '--token', token],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`upstash-rest server exited (${code})`)));
    child.stdout!.once('data', (d: Buffer) => resolve({ url: d.toString().trim(), child }));
  });
}

const { values } = parseArgs({
  options: { ops: { type: 'string', default: '20000' }, concurrency: { type: 'string', default: '32' } },
});
const OPS = Number(values.ops);
const CONCURRENCY = Number(values.concurrency);
const TENANTS = 100;

interface Row {
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** Runs `op` `ops` times with `concurrency` in flight; latency per call, throughput over the whole. */
async function timed(op: (i: number) => Promise<unknown>, ops: number, concurrency: number): Promise<Row> {
  const latencies = new Float64Array(ops);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < ops; i = next++) {
        const t = performance.now();
        await op(i);
        latencies[i] = performance.now() - t;
      }
    }),
  );
  const elapsed = performance.now() - started;
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    opsPerSec: (ops * 1000) / elapsed,
    p50Ms: sorted[Math.floor(ops * 0.5)]!,
    p99Ms: sorted[Math.floor(ops * 0.99)]!,
  };
}

async function run(op: (i: number) => Promise<unknown>, ops = OPS): Promise<Row> {
  const throughput = await timed(op, ops, CONCURRENCY);
  const latency = await timed(op, Math.ceil(ops / 4), 1);
  return { opsPerSec: throughput.opsPerSec, p50Ms: latency.p50Ms, p99Ms: latency.p99Ms };
}

function admission(i: number): AdmitInput {
  const tenant = `t${i % TENANTS}`;
  const account = `a${i % (TENANTS * 4)}`;
  const limits: WindowLimit[] = [];
  const scopes = [
    { kind: 'account-model' as const, tenant, account, model: 'm' },
    { kind: 'tenant-model' as const, tenant, model: 'm' },
    { kind: 'tenant' as const, tenant },
  ];
  for (const scope of scopes) {
    limits.push({
      key: windowKey(scope, 'requests', 60_000),
      scope: scope.kind,
      unit: 'requests',
      limit: 1e9,
      windowMs: 60_000,
      cost: 1,
    });
    limits.push({
      key: windowKey(scope, 'tokens', 60_000),
      scope: scope.kind,
      unit: 'tokens',
      limit: 1e12,
      windowMs: 60_000,
      cost: 300,
    });
  }
  return {
    limits,
    reservoir: { key: reservoirKey(tenant, `batch-${tenant}-m`), max: 1e9, member: `r${i}`, holdMs: 60_000 },
  };
}

const redis = await startRedisServer({ log: () => {} });
const rest = await startRestProcess(redis.url, 'bench');
try {
  const tcpClient = await connectRedis(redis.url);
  const tcp: RateStore = await createTcpStore({ redis: tcpClient });
  const upstash = new UpstashRedis({ url: rest.url, token: 'bench', automaticDeserialization: false });
  const viaRest: RateStore = createUpstashStore({ redis: upstash });
  const ratelimit = new Ratelimit({
    redis: upstash,
    limiter: Ratelimit.fixedWindow(1e9, '60 s'),
    prefix: 'bench',
    analytics: false,
    ephemeralCache: false,
  });
  const trivial = await tcpClient.script('LOAD', 'return 1');

  // Warm up every path (script loading, connections, the JIT on both sides).
  for (let round = 0; round < 2; round++) {
    await timed((i) => tcp.admit(admission(i)), 3_000, CONCURRENCY);
    await timed((i) => viaRest.admit(admission(i)), 3_000, CONCURRENCY);
    await timed((i) => ratelimit.limit(`t${i % TENANTS}`), 3_000, CONCURRENCY);
  }

  const guarded = createGuardedStore({ primary: tcp, clock: systemClock });
  const exhausted: AdmitInput = {
    limits: [
      {
        key: windowKey({ kind: 'tenant', tenant: 'flood' }, 'requests', 60_000),
        scope: 'tenant',
        unit: 'requests',
        limit: 1,
        windowMs: 60_000,
        cost: 1,
      },
    ],
  };
  await guarded.admit(exhausted);
  await guarded.admit(exhausted); // refused: from now on the cache answers

  const rows: Record<string, Row> = {
    'a. sluice admit, TCP (6 windows + reservoir)': await run((i) => tcp.admit(admission(i))),
    'b. sluice admit, Upstash REST (same)': await run((i) => viaRest.admit(admission(i))),
    'c. @upstash/ratelimit fixedWindow, REST (1 limit)': await run((i) => ratelimit.limit(`t${i % TENANTS}`)),
    'd. raw EVALSHA return 1, TCP (floor)': await run(() => tcpClient.evalsha(trivial as string, 0)),
    'e. cached denial (guarded store)': await run(() => guarded.admit(exhausted), OPS * 5),
  };
  const [a, b, c, d, e] = Object.values(rows) as [Row, Row, Row, Row, Row];
  console.log(
    `admission, ${OPS} ops per variant (e: ${OPS * 5}); ops/s with ${CONCURRENCY} in flight, p50/p99 one at a time; one redis-server on loopback`,
  );
  console.log('variant'.padEnd(52) + 'ops/s'.padStart(10) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9));
  for (const [name, r] of Object.entries(rows))
    console.log(
      name.padEnd(52) +
        r.opsPerSec.toFixed(0).padStart(10) +
        r.p50Ms.toFixed(3).padStart(9) +
        r.p99Ms.toFixed(3).padStart(9),
    );
  const ratios = {
    restVsRatelimitThroughput: b.opsPerSec / c.opsPerSec,
    tcpP50VsFloor: a.p50Ms / d.p50Ms,
    cachedDenialVsTcpThroughput: e.opsPerSec / a.opsPerSec,
  };
  console.log(
    `(b)/(c) throughput ${ratios.restVsRatelimitThroughput.toFixed(2)}x (target >= 1.0); (a)/(d) p50 ${ratios.tcpP50VsFloor.toFixed(2)}x (target <= 1.3); (e)/(a) throughput ${ratios.cachedDenialVsTcpThroughput.toFixed(1)}x (target >= 10)`,
  );
  console.log(JSON.stringify({ bench: 'admission', ops: OPS, concurrency: CONCURRENCY, rows, ratios }));
  tcpClient.disconnect();
} finally {
  rest.child.kill('SIGTERM');
  await redis.close();
  process.exit(0);
}
