/**
 * Store memory of the deployment-wide aggregate (issue 16):
 *   npm run bench -- aggregate-memory [--tenants 10000] [--per-second 200] [--requests 20]
 *
 * Tenants burst in turn, `--per-second` new ones each second, each sending
 * `--requests` requests over two accounts (a fifth refused), all dispatched and
 * completed, through the real sink into a real redis-server (its own, started
 * here). Every second it reads `INFO memory` and `MEMORY USAGE` of the
 * aggregate's counter keys and of its trace buckets. Both bounds come from the
 * layout (lib/telemetry/aggregate/layout.ts): keys live at most their TTL and
 * hashes hold at most their cap (trace fields: at most traceMaxBytes each), so
 * neither depends on the number of tenants or the request rate. A run shorter
 * than the trace TTL fills fewer buckets than the bound allows, so the largest
 * single trace bucket is also checked against one bucket's share of the bound.
 * Prints one JSON line with the figures last.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createTcpStore } from '../lib/store/redis/tcp.js';
import { createAggregateSink } from '../lib/telemetry/aggregate/sink.js';
import { AGGREGATE, TRACE_BUCKETS_LIVE } from '../lib/telemetry/aggregate/layout.js';
import { systemClock } from '../functions/runtime/system-clock.js';
import { startRedisServer } from '../scripts/redis/server.js';

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    tenants: { type: 'string', default: '10000' },
    'per-second': { type: 'string', default: '200' },
    requests: { type: 'string', default: '20' },
  },
});
const TENANTS = Number(values.tenants);
const PER_SECOND = Number(values['per-second']);
const REQUESTS = Number(values.requests);

/** Bytes a field of the aggregate may take in Redis at most (name up to ~160 bytes plus hash-entry overhead). */
const BYTES_PER_FIELD = 256;
const flowKeysLive = Math.ceil(AGGREGATE.flowTtlMs / AGGREGATE.bucketMs) + 1;
const historyKeysLive = Math.ceil(AGGREGATE.historyTtlMs / 60_000) + 1;
const boundFields =
  flowKeysLive * AGGREGATE.flowMaxFields +
  historyKeysLive * AGGREGATE.historyMaxFields +
  AGGREGATE.depthMaxFields +
  2 * AGGREGATE.maxInstances;
const boundBytes = boundFields * BYTES_PER_FIELD;
/** A trace field: its value (rounded up to an allocator size class, at most a quarter more) and the field's own cost. */
const BYTES_PER_TRACE_FIELD = Math.ceil(AGGREGATE.traceMaxBytes * 1.25) + BYTES_PER_FIELD;
const traceBucketBoundBytes = AGGREGATE.traceMaxIds * BYTES_PER_TRACE_FIELD;
const traceBoundBytes = TRACE_BUCKETS_LIVE * traceBucketBoundBytes;
const TRACE_PREFIX = 'sluice:{agg}:trace:';

const redis = await startRedisServer({ log: () => {} });
const client = new Redis(redis.url, { protocol: 2 } as never);
const store = await createTcpStore({ url: redis.url });
const sink = createAggregateSink({ store, clock: systemClock, instance: 'bench-edge', role: 'edge' });

interface Usage {
  keys: number;
  bytes: number;
}

/** MEMORY USAGE of every aggregate key, the counters and the trace buckets apart, and the largest trace bucket. */
async function usage(): Promise<{ counters: Usage; traces: Usage; bucket: Usage & { fields: number } }> {
  const counters = { keys: 0, bytes: 0 };
  const traces = { keys: 0, bytes: 0 };
  const bucket = { keys: 1, bytes: 0, fields: 0 };
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', 'sluice:{agg}*', 'COUNT', 1000);
    cursor = next;
    for (const k of batch) {
      const bytes = Number((await client.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')) ?? 0);
      const into = k.startsWith(TRACE_PREFIX) ? traces : counters;
      into.keys++;
      into.bytes += bytes;
      if (into === traces && bytes > bucket.bytes) Object.assign(bucket, { bytes, fields: await client.hlen(k) });
    }
  } while (cursor !== '0');
  return { counters, traces, bucket };
}

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
const baseline = await usedMemory();
let peakAggregate = { keys: 0, bytes: 0 };
let peakTraces = { keys: 0, bytes: 0 };
let peakBucket = { keys: 0, bytes: 0, fields: 0 };
let peakTotal = 0;
let peakUsed = 0;
const start = Date.now();
let sent = 0;

console.log(
  `aggregate-memory: ${TENANTS} tenants bursting in turn, ${PER_SECOND} new per second, ${REQUESTS} requests each`,
);
for (let second = 0; sent < TENANTS; second++) {
  const until = start + (second + 1) * 1000;
  for (let i = 0; i < PER_SECOND && sent < TENANTS; i++, sent++) {
    const tenant = `tenant-${String(sent).padStart(5, '0')}`;
    for (let r = 0; r < REQUESTS; r++) {
      const account = `${tenant}-app-${r % 2}`;
      const id = `req-${sent}-${r}`;
      const e = { id, tenant, account, tier: 'batch', model: 'sim-llm' };
      const liteTopic = `batch-${tenant}-sim_2dllm`;
      if (r % 5 === 4) {
        sink.onAdmission({
          ...e,
          outcome: 'rejected',
          reason: 'account-model:requests',
          windows: [{ scope: 'account-model', unit: 'requests', limit: 16, remaining: 0 }],
        });
        continue;
      }
      sink.onAdmission({
        ...e,
        outcome: 'admitted',
        liteTopic,
        windows: [{ scope: 'account-model', unit: 'requests', limit: 16, remaining: 15 - r }],
      });
      const envelope = { id, tier: 'batch', tenant, model: 'sim-llm', liteTopic };
      sink.onDispatch({ type: 'suspended', envelope, ms: 50, cause: 'pace' });
      sink.onDispatch({ type: 'started', envelope, queueWaitMs: 60 });
      sink.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 120 });
    }
  }
  await sink.flush();
  const [{ counters, traces, bucket }, used] = await Promise.all([usage(), usedMemory()]);
  if (counters.bytes > peakAggregate.bytes) peakAggregate = counters;
  if (traces.bytes > peakTraces.bytes) peakTraces = traces;
  if (bucket.bytes > peakBucket.bytes) peakBucket = bucket;
  peakTotal = Math.max(peakTotal, counters.bytes + traces.bytes);
  peakUsed = Math.max(peakUsed, used - baseline);
  const wait = until - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

const mib = (n: number) => Math.round((n / 2 ** 20) * 100) / 100;
const totalBoundBytes = boundBytes + traceBoundBytes;
const traceCaps = `${TRACE_BUCKETS_LIVE} buckets x ${AGGREGATE.traceMaxIds} ids x ${BYTES_PER_TRACE_FIELD} B`;
console.log(
  `counter keys: peak ${peakAggregate.keys} keys, ${mib(peakAggregate.bytes)} MiB (MEMORY USAGE); bound ${boundFields} fields x ${BYTES_PER_FIELD} B = ${mib(boundBytes)} MiB`,
);
console.log(
  `trace keys:   peak ${peakTraces.keys} buckets, ${mib(peakTraces.bytes)} MiB; bound ${traceCaps} = ${mib(traceBoundBytes)} MiB`,
);
const bucketCaps = `${AGGREGATE.traceMaxIds} ids x ${BYTES_PER_TRACE_FIELD} B`;
console.log(
  `one trace bucket: peak ${peakBucket.fields} ids, ${mib(peakBucket.bytes)} MiB; bound ${bucketCaps} = ${mib(traceBucketBoundBytes)} MiB`,
);
console.log(`total:        peak ${mib(peakTotal)} MiB; bound ${mib(totalBoundBytes)} MiB`);
console.log(`redis used_memory above the empty server: peak ${mib(peakUsed)} MiB`);
const result = {
  bench: 'aggregate-memory',
  tenants: TENANTS,
  perSecond: PER_SECOND,
  requestsPerTenant: REQUESTS,
  requests: TENANTS * REQUESTS,
  aggregatePeakBytes: peakAggregate.bytes,
  aggregatePeakKeys: peakAggregate.keys,
  aggregateBoundBytes: boundBytes,
  tracePeakBytes: peakTraces.bytes,
  tracePeakKeys: peakTraces.keys,
  traceBoundBytes,
  traceBucketPeakBytes: peakBucket.bytes,
  traceBucketPeakIds: peakBucket.fields,
  traceBucketBoundBytes,
  totalPeakBytes: peakTotal,
  totalBoundBytes,
  withinBound:
    peakAggregate.bytes <= boundBytes &&
    peakTraces.bytes <= traceBoundBytes &&
    peakBucket.bytes <= traceBucketBoundBytes &&
    peakTotal <= totalBoundBytes,
  usedMemoryPeakBytes: peakUsed,
};
await store.close();
client.disconnect();
await redis.close();
console.log(JSON.stringify(result));
if (!result.withinBound) process.exitCode = 1;
