/**
 * Store memory of the deployment-wide aggregate (issue 16):
 *   npm run bench -- aggregate-memory [--tenants 10000] [--per-second 200] [--requests 20]
 *
 * Tenants burst in turn, `--per-second` new ones each second, each sending
 * `--requests` requests over two accounts (a fifth refused), all dispatched and
 * completed, through the real sink into a real redis-server (its own, started
 * here). Every second it reads `INFO memory` and `MEMORY USAGE` of the
 * aggregate's keys and of the request traces. The aggregate's bound comes from
 * its layout (lib/telemetry/aggregate/layout.ts): keys live at most their TTL
 * and hashes hold at most their cap, so the bound does not depend on the number
 * of tenants; traces are bounded by request rate x trace TTL instead.
 * Prints one JSON line with the figures last.
 */
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { createTcpStore } from '../lib/store/redis/tcp.js';
import { createAggregateSink } from '../lib/telemetry/aggregate/sink.js';
import { AGGREGATE } from '../lib/telemetry/aggregate/layout.js';
import { systemClock } from '../functions/runtime/system-clock.js';
import { startRedisServer } from '../scripts/redis/server.js';

const { values } = parseArgs({
  args: process.argv.slice(3),
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
  flowKeysLive * AGGREGATE.flowMaxFields + historyKeysLive * AGGREGATE.historyMaxFields + AGGREGATE.depthMaxFields + 2 * AGGREGATE.maxInstances;
const boundBytes = boundFields * BYTES_PER_FIELD;

const redis = await startRedisServer({ log: () => {} });
const client = new Redis(redis.url, { protocol: 2 } as never);
const store = await createTcpStore({ url: redis.url });
const sink = createAggregateSink({ store, clock: systemClock, instance: 'bench-edge', role: 'edge' });

async function usage(pattern: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const k of batch) {
      keys++;
      bytes += Number((await client.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')) ?? 0);
    }
  } while (cursor !== '0');
  return { keys, bytes };
}

/** Traces are too many to size one by one each second: count them all, size a sample. */
async function traceUsage(aggregateKeys: number): Promise<{ keys: number; bytes: number }> {
  const keys = Math.max(0, (await client.dbsize()) - aggregateKeys);
  const [, sample] = await client.scan('0', 'MATCH', 'sluice:trace:*', 'COUNT', 200);
  if (sample.length === 0) return { keys, bytes: 0 };
  let bytes = 0;
  for (const k of sample) bytes += Number((await client.call('MEMORY', 'USAGE', k, 'SAMPLES', '0')) ?? 0);
  return { keys, bytes: Math.round((bytes / sample.length) * keys) };
}

const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))![1]);
const baseline = await usedMemory();
let peakAggregate = { keys: 0, bytes: 0 };
let peakTraces = { keys: 0, bytes: 0 };
let peakUsed = 0;
const start = Date.now();
let sent = 0;

console.log(`aggregate-memory: ${TENANTS} tenants bursting in turn, ${PER_SECOND} new per second, ${REQUESTS} requests each`);
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
        sink.onAdmission({ ...e, outcome: 'rejected', reason: 'account-model:requests', windows: [{ scope: 'account-model', unit: 'requests', limit: 16, remaining: 0 }] });
        continue;
      }
      sink.onAdmission({ ...e, outcome: 'admitted', liteTopic, windows: [{ scope: 'account-model', unit: 'requests', limit: 16, remaining: 15 - r }] });
      const envelope = { id, tier: 'batch', tenant, model: 'sim-llm', liteTopic };
      sink.onDispatch({ type: 'suspended', envelope, ms: 50, cause: 'pace' });
      sink.onDispatch({ type: 'started', envelope, queueWaitMs: 60 });
      sink.onDispatch({ type: 'completed', envelope, status: 200, totalMs: 120 });
    }
  }
  await sink.flush();
  const agg = await usage('sluice:{agg}*');
  const [traces, used] = await Promise.all([traceUsage(agg.keys), usedMemory()]);
  if (agg.bytes > peakAggregate.bytes) peakAggregate = agg;
  if (traces.bytes > peakTraces.bytes) peakTraces = traces;
  peakUsed = Math.max(peakUsed, used - baseline);
  const wait = until - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}

const mib = (n: number) => Math.round((n / 2 ** 20) * 100) / 100;
console.log(`aggregate keys: peak ${peakAggregate.keys} keys, ${mib(peakAggregate.bytes)} MiB (MEMORY USAGE); bound ${boundFields} fields x ${BYTES_PER_FIELD} B = ${mib(boundBytes)} MiB`);
console.log(`trace keys:     peak ${peakTraces.keys} keys, ${mib(peakTraces.bytes)} MiB (sampled); bounded by requests per ${AGGREGATE.traceTtlMs / 60_000} min x ${AGGREGATE.traceMaxSteps} steps, not by tenants`);
console.log(`redis used_memory above the empty server: peak ${mib(peakUsed)} MiB`);
const result = {
  bench: 'aggregate-memory',
  tenants: TENANTS,
  perSecond: PER_SECOND,
  requestsPerTenant: REQUESTS,
  aggregatePeakBytes: peakAggregate.bytes,
  aggregatePeakKeys: peakAggregate.keys,
  aggregateBoundBytes: boundBytes,
  withinBound: peakAggregate.bytes <= boundBytes,
  tracePeakBytes: peakTraces.bytes,
  tracePeakKeys: peakTraces.keys,
  usedMemoryPeakBytes: peakUsed,
};
await store.close();
client.disconnect();
await redis.close();
console.log(JSON.stringify(result));
if (!result.withinBound) process.exitCode = 1;
