/**
 * How long after a dispatcher stores a result the waiting edge wakes, over Redis
 * TCP and over the local Upstash-REST server, against the in-process channel as
 * the floor. Starts its own redis-server and REST server.
 *   npx tsx bench/results-wake.ts [--rounds 200]
 */
import { parseArgs } from 'node:util';
import { Redis as IoRedis } from 'ioredis';
import { Redis as UpstashRedis } from '@upstash/redis';
import { systemClock } from '../functions/runtime/system-clock.js';
import { createEmbeddedResults } from '../lib/results/embedded.js';
import { createRedisResults, ioredisTransport, upstashTransport } from '../lib/results/redis.js';
import type { ResultChannel } from '../lib/results/types.js';
import { startRedisServer } from '../scripts/redis/server.js';
import { startUpstashRestServer } from '../scripts/upstash-rest/server.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);

async function measure(writer: ResultChannel, reader: ResultChannel): Promise<{ p50: number; p99: number }> {
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const id = `req_wake_${Date.now()}_${i}`;
    let woke = 0;
    const waiting = reader.wait(id, 5_000).then(() => (woke = performance.now()));
    await new Promise((r) => setTimeout(r, 5));
    await writer.complete({ id, tenant: 't', status: 'completed', httpStatus: 200, body: {}, completedAt: 0 });
    const written = performance.now();
    await waiting;
    samples.push(Math.max(0, woke - written));
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(rounds * 0.5)]!, p99: samples[Math.min(rounds - 1, Math.floor(rounds * 0.99))]! };
}

const redis = await startRedisServer({ log: () => {} });
const rest = await startUpstashRestServer({ redisUrl: redis.url, token: 'bench', log: () => {} });
try {
  const embedded = createEmbeddedResults({ clock: systemClock });
  const tcp = () => createRedisResults({ transport: ioredisTransport(new IoRedis(redis.url)), clock: systemClock });
  const up = () =>
    createRedisResults({
      transport: upstashTransport(new UpstashRedis({ url: rest.url, token: 'bench', automaticDeserialization: false })),
      clock: systemClock,
    });
  const rows = {
    embedded: await measure(embedded, embedded),
    tcp: await measure(tcp(), tcp()),
    upstashRest: await measure(up(), up()),
  };
  console.log(`result wake-up after the write, ${rounds} rounds (ms)`);
  console.log('channel'.padEnd(14) + 'p50'.padStart(8) + 'p99'.padStart(8));
  for (const [name, r] of Object.entries(rows))
    console.log(name.padEnd(14) + r.p50.toFixed(2).padStart(8) + r.p99.toFixed(2).padStart(8));
  console.log(
    JSON.stringify({
      bench: 'results-wake',
      rounds,
      ...Object.fromEntries(
        Object.entries(rows).map(([k, r]) => [k, { p50Ms: +r.p50.toFixed(3), p99Ms: +r.p99.toFixed(3) }]),
      ),
    }),
  );
} finally {
  await rest.close();
  await redis.close();
  process.exit(0);
}
