/**
 * The conformance suite on all three RateStores: embedded, Redis over TCP
 * (ioredis) and Redis over the local Upstash-REST server (@upstash/redis).
 */
import { Redis as UpstashRedis } from '@upstash/redis';
import { inject } from 'vitest';
import { createTcpStore } from '../../../lib/store/redis/tcp.js';
import { createUpstashStore } from '../../../lib/store/redis/upstash.js';
import { embeddedFactory, runRateStoreConformance } from './conformance.js';

const redisUrl = inject('redisUrl');
const upstash = () =>
  new UpstashRedis({ url: inject('upstashUrl'), token: inject('upstashToken'), enableTelemetry: false, retry: false });

runRateStoreConformance('embedded', embeddedFactory);
runRateStoreConformance('redis over TCP', (clock) => createTcpStore({ url: redisUrl, clock }));
runRateStoreConformance('redis over Upstash REST', async (clock) => createUpstashStore({ redis: upstash(), clock }), false);
