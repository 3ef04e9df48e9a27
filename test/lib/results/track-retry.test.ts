import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createRedisResults, type ResultTransport } from '../../../lib/results/redis.js';

function transport(failures: number): ResultTransport & { writes: number } {
  const t = {
    writes: 0,
    get: async () => null,
    async setNx() {
      if (failures-- > 0) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
      t.writes++;
    },
    setFinalAndPublish: async () => true,
    appendAndPublish: async () => {},
    range: async () => [],
    subscribe: async () => async () => {},
    close: async () => {},
  };
  return t;
}

describe('Redis result channel: track', () => {
  it('rides out a Redis restart: retries the pending record instead of failing the accepted request', async () => {
    const t = transport(3);
    await createRedisResults({ transport: t, clock: systemClock, trackRetryMs: 2_000 }).track('r1', 'acme');
    expect(t.writes).toBe(1);
  });

  it('gives up after its budget, so a client is not held while Redis stays away', async () => {
    const t = transport(1_000);
    await expect(
      createRedisResults({ transport: t, clock: systemClock, trackRetryMs: 300 }).track('r1', 'acme'),
    ).rejects.toThrow(/writeable/);
    expect(t.writes).toBe(0);
  });
});
