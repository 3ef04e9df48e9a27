/**
 * Integration services: a real redis-server (installed from Debian if missing)
 * and the local Upstash-REST server in front of it, one pair for the whole run.
 * If either cannot start, setup throws and every integration test fails; nothing
 * is skipped.
 *
 * Tests that need Redis to go away mid-run use
 * `attachRedisServer(inject('redisPort'), inject('redisDir'))` from
 * scripts/redis/server.ts and call `stop()` / `start()`: the server is fully
 * described by its port and directory, so a worker can restart it on the same
 * port, and the REST server reconnects by itself. Teardown stops whatever then
 * serves the port.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startRedisServer, stopRedisServer } from '../../scripts/redis/server.ts';
import { startUpstashRestServer } from '../../scripts/upstash-rest/server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** redis://127.0.0.1:PORT of the run's redis-server. */
    redisUrl: string;
    redisPort: number;
    /** Working directory of that redis-server; with the port it is enough to restart it. */
    redisDir: string;
    /** Base URL of the local Upstash-REST server in front of it. */
    upstashUrl: string;
    upstashToken: string;
  }
}

export default async function setup({ provide }: Pick<TestProject, 'provide'>): Promise<() => Promise<void>> {
  const log = (message: string) => process.stderr.write(`[redis.setup] ${message}\n`);
  const redis = await startRedisServer({ log });
  const token = randomBytes(16).toString('hex');
  let rest;
  try {
    rest = await startUpstashRestServer({ redisUrl: redis.url, token, log });
  } catch (err) {
    await redis.close();
    throw err;
  }
  provide('redisUrl', redis.url);
  provide('redisPort', redis.port);
  provide('redisDir', redis.dir);
  provide('upstashUrl', rest.url);
  provide('upstashToken', token);

  return async () => {
    await rest.close();
    // A test may have restarted Redis from its worker; stop by port, not by handle.
    await stopRedisServer(redis.port, redis.dir);
    rmSync(redis.dir, { recursive: true, force: true });
  };
}
