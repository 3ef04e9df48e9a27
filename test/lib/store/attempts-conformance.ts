/**
 * One suite for every AttemptStore: the embedded rule and its Lua twin over TCP
 * and Upstash REST give the same claims, on a virtual clock passed to the store.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createEmbeddedAttempts, type AttemptStore } from '../../../lib/store/attempts.js';

export type AttemptStoreFactory = (clock: Clock) => Promise<AttemptStore>;

const TTL = 3_600_000;

export function runAttemptStoreConformance(name: string, make: AttemptStoreFactory): void {
  describe(`AttemptStore conformance: ${name}`, () => {
    const opened: AttemptStore[] = [];
    const open = async (clock: Clock) => {
      const s = await make(clock);
      opened.push(s);
      return s;
    };
    afterAll(async () => {
      await Promise.all(opened.map((s) => s.close()));
    });

    it('grants one call at a time, and a second claim waits for the lease', async () => {
      const clock = new VirtualClock(1_000);
      const s = await open(clock);
      const id = `req-${randomUUID()}`;
      expect(await s.claim(id, 'a', 5_000, TTL)).toEqual({ state: 'granted', calls: 1, failures: 0 });
      expect(await s.claim(id, 'b', 5_000, TTL)).toEqual({ state: 'busy', retryAfterMs: 5_000, calls: 1, failures: 0 });
      await clock.advance(1_500);
      expect(await s.claim(id, 'b', 5_000, TTL)).toEqual({ state: 'busy', retryAfterMs: 3_500, calls: 1, failures: 0 });
      expect(await s.end(id, 'a', true, TTL)).toBe(1);
      expect(await s.claim(id, 'b', 5_000, TTL)).toEqual({ state: 'granted', calls: 2, failures: 1 });
      expect(await s.end(id, 'b', true, TTL)).toBe(2);
    });

    it('reports a call whose owner vanished as lost, once, counting it as a failure', async () => {
      const clock = new VirtualClock(0);
      const s = await open(clock);
      const id = `req-${randomUUID()}`;
      await s.claim(id, 'a', 1_000, TTL);
      await clock.advance(1_000);
      expect(await s.claim(id, 'b', 1_000, TTL)).toEqual({ state: 'lost', calls: 1, failures: 1 });
      // The late owner's end counts nothing more.
      expect(await s.end(id, 'a', true, TTL)).toBe(1);
      expect(await s.claim(id, 'b', 1_000, TTL)).toEqual({ state: 'granted', calls: 2, failures: 1 });
    });

    it('forgets a record after its TTL', async () => {
      const clock = new VirtualClock(0);
      const s = await open(clock);
      const id = `req-${randomUUID()}`;
      await s.claim(id, 'a', 100, 1_000);
      expect(await s.end(id, 'a', true, 1_000)).toBe(1);
      await clock.advance(1_001);
      // Redis expires by its own time; wait that out for the Lua twin.
      await new Promise((r) => setTimeout(r, 1_050));
      expect(await s.claim(id, 'a', 100, 1_000)).toEqual({ state: 'granted', calls: 1, failures: 0 });
    });

    it('agrees with the embedded reference on random sequences', async () => {
      const op = fc.oneof(
        fc.record({
          op: fc.constant('claim' as const),
          owner: fc.constantFrom('a', 'b', 'c'),
          leaseMs: fc.integer({ min: 1, max: 3_000 }),
        }),
        fc.record({ op: fc.constant('end' as const), owner: fc.constantFrom('a', 'b', 'c'), failed: fc.boolean() }),
        fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 2_000 }) }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (steps) => {
          const clock = new VirtualClock(10_000);
          const s = await make(clock);
          const ref = createEmbeddedAttempts(clock);
          const id = `req-${randomUUID()}`;
          for (const step of steps) {
            if (step.op === 'advance') await clock.advance(step.ms);
            else if (step.op === 'claim')
              expect(await s.claim(id, step.owner, step.leaseMs, TTL)).toEqual(
                await ref.claim(id, step.owner, step.leaseMs, TTL),
              );
            else
              expect(await s.end(id, step.owner, step.failed, TTL)).toBe(
                await ref.end(id, step.owner, step.failed, TTL),
              );
          }
          await s.close();
        }),
        { numRuns: 40 },
      );
    });
  });
}
