/**
 * The conformance suite on all three RateStores: embedded, Redis over TCP
 * (ioredis) and Redis over the local Upstash-REST server (@upstash/redis).
 */
import { Redis as UpstashRedis } from '@upstash/redis';
import { inject } from 'vitest';
import { createTcpStore } from '../../../lib/store/redis/tcp.js';
import { createGuardedStore } from '../../../lib/store/guarded.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createUpstashStore } from '../../../lib/store/redis/upstash.js';
import { embeddedFactory, runRateStoreConformance } from './conformance.js';
import { connectRedis, ioredisEvalClient } from '../../../lib/store/redis/tcp.js';
import { upstashEvalClient } from '../../../lib/store/redis/upstash.js';
import { createRedisAttempts } from '../../../lib/store/redis/attempts.js';
import { runAttemptStoreConformance } from './attempts-conformance.js';

const redisUrl = inject('redisUrl');
const upstash = () =>
  new UpstashRedis({ url: inject('upstashUrl'), token: inject('upstashToken'), enableTelemetry: false, retry: false });

runRateStoreConformance('embedded', embeddedFactory);
runRateStoreConformance('redis over TCP', (clock) => createTcpStore({ url: redisUrl, clock }));
runRateStoreConformance(
  'redis over Upstash REST',
  async (clock) => createUpstashStore({ redis: upstash(), clock }),
  false,
);
runAttemptStoreConformance('redis over TCP', async (clock) => {
  const redis = await connectRedis(redisUrl);
  return createRedisAttempts(ioredisEvalClient(redis), { clock, onClose: async () => redis.disconnect() });
});
runAttemptStoreConformance('redis over Upstash REST', async (clock) =>
  createRedisAttempts(upstashEvalClient(upstash()), { clock }),
);
// The denial cache answers some refusals itself, with less detail (test/lib/store/redis-guarded.int.test.ts covers it).
runRateStoreConformance('guarded over TCP, no denial cache', async (clock) =>
  createGuardedStore({
    primary: await createTcpStore({ url: redisUrl, clock }),
    clock: clock ?? systemClock,
    timeoutMs: 5_000,
    denialCache: false,
  }),
);
