import { Redis as IoRedis } from 'ioredis';
import { Redis as UpstashRedis } from '@upstash/redis';
import { inject } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createEmbeddedResults } from '../../../lib/results/embedded.js';
import { createRedisResults, ioredisTransport, upstashTransport } from '../../../lib/results/redis.js';
import { runResultChannelConformance } from './conformance.js';

const tcp = async () =>
  createRedisResults({ transport: ioredisTransport(new IoRedis(inject('redisUrl'))), clock: systemClock });
const rest = async () =>
  createRedisResults({
    transport: upstashTransport(
      new UpstashRedis({ url: inject('upstashUrl'), token: inject('upstashToken'), automaticDeserialization: false }),
    ),
    clock: systemClock,
  });

runResultChannelConformance('embedded', async () => createEmbeddedResults({ clock: systemClock }));
runResultChannelConformance('redis over TCP', tcp);
runResultChannelConformance('redis over Upstash REST', rest);
