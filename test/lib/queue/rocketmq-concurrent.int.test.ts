import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { RocketMQLiteQueueOptions } from '../../../lib/queue/rocketmq/index.js';
import { Consume, type DeadLetter, type LiteMessage } from '../../../lib/queue/types.js';
import { PROXY_CONSUMER_SETTINGS } from '../../../infra/rocketmq/proxy-conf.js';
import { pause, until, useRocketMQ } from '../../support/rocketmq.ts';

// The adapter on a non-orderly wildcard group (orderly: false): several messages of one
// LiteTopic handled at once, failures counted and dead-lettered, and the siblings the
// broker redelivers after a Suspend (test/scripts/rocketmq-concurrent.int.test.ts)
// not handled twice.
const rocketmq = useRocketMQ();
const freshQueue = (orderly: boolean, extra: Partial<RocketMQLiteQueueOptions> = {}) =>
  rocketmq.freshQueue('nonord', { orderly, maxAttempts: 16 }, extra);

describe('RocketMQ adapter on a non-orderly group', () => {
  it('runs several messages of one LiteTopic at once, up to its concurrency', async () => {
    const queue = await freshQueue(false);
    // Below the proxy's receive batch, so the concurrency is what bounds it.
    const concurrency = PROXY_CONSUMER_SETTINGS.grpcClientConsumerLongPollingBatchSize - 1;
    const topic = `burst-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 30; i++) await queue.send(topic, String(i));
    let running = 0;
    let maxRunning = 0;
    const handled: string[] = [];
    queue.subscribe(
      async (m) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await pause(200);
        running--;
        handled.push(m.body);
        return Consume.success;
      },
      { concurrency },
    );
    await until('all 30', () => handled.length >= 30);
    await pause(500);
    expect(maxRunning).toBe(concurrency);
    expect(handled.slice().sort()).toEqual(Array.from({ length: 30 }, (_, i) => String(i)).sort());
  });

  it('counts failures and dead-letters after maxAttempts; the siblings redelivered meanwhile are not handled again', async () => {
    const deadLetters: DeadLetter[] = [];
    const queue = await freshQueue(false, {
      maxAttempts: 3,
      retryBackoffMs: () => 300,
      onDeadLetter: (d) => void deadLetters.push(d),
    });
    const topic = `poison-${randomUUID().slice(0, 8)}`;
    const bodies = ['ok0', 'poison', 'ok1', 'ok2', 'ok3'];
    for (const b of bodies) await queue.send(topic, b);
    const calls: LiteMessage[] = [];
    queue.subscribe(
      async (m) => {
        calls.push(m);
        if (m.body === 'poison') return Consume.failure('always fails');
        await pause(50);
        return Consume.success;
      },
      { concurrency: 8 },
    );
    await until('the dead letter', () => deadLetters.length >= 1, 30_000);
    await queue.send(topic, 'after');
    await until('the message after', () => calls.some((m) => m.body === 'after'), 30_000);
    await pause(1_000);

    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]!.message.body).toBe('poison');
    expect(deadLetters[0]!.reason).toBe('always fails (after 3 attempts)');
    expect(calls.filter((m) => m.body === 'poison').map((m) => m.attempt)).toEqual([1, 2, 3]);
    // The broker brought ok1..ok3 back with each retry of the poison message (they sit
    // after it in the batch); the adapter acked them without the handler.
    for (const b of ['ok0', 'ok1', 'ok2', 'ok3', 'after'])
      expect(
        calls.filter((m) => m.body === b),
        b,
      ).toHaveLength(1);
  });

  // With several receivers the redelivered batch may reach another consumer than the
  // one that handled it first: the settled ids are the subscription's, not a consumer's.
  it.each([1, 3])(
    'a Suspend brings its message back after the pause, without handling the acked siblings again (receivers: %i)',
    async (receivers) => {
      const queue = await freshQueue(false, { receivers });
      const topic = `susp-${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 5; i++) await queue.send(topic, `m${i}`);
      const calls: Array<{ body: string; at: number }> = [];
      let suspendedAt = 0;
      queue.subscribe(
        async (m) => {
          calls.push({ body: m.body, at: Date.now() });
          if (m.body === 'm1' && suspendedAt === 0) {
            suspendedAt = Date.now();
            return Consume.suspend(1_500);
          }
          return Consume.success;
        },
        { concurrency: 8 },
      );
      await until('m1 again', () => calls.filter((c) => c.body === 'm1').length >= 2, 30_000);
      await pause(1_000);
      expect(calls.filter((c) => c.body === 'm1')[1]!.at - suspendedAt).toBeGreaterThanOrEqual(1_400);
      expect(calls.map((c) => c.body).sort()).toEqual(['m0', 'm1', 'm1', 'm2', 'm3', 'm4']);
    },
  );

  it('a message delivered again while it is being handled is handled once', async () => {
    const queue = await freshQueue(false);
    const topic = `rerun-${randomUUID().slice(0, 8)}`;
    for (let i = 0; i < 4; i++) await queue.send(topic, `m${i}`);
    const calls: string[] = [];
    let suspended = false;
    queue.subscribe(
      async (m) => {
        calls.push(m.body);
        if (m.body === 'm0' && !suspended) {
          suspended = true;
          return Consume.suspend(500);
        }
        if (m.body === 'm2') await pause(3_000);
        return Consume.success;
      },
      { concurrency: 8 },
    );
    await until('m0 again', () => calls.filter((b) => b === 'm0').length >= 2, 30_000);
    // m2's first run ends at ~3 s; the broker's second delivery of it (~0.6 s) joined it.
    await pause(4_000);
    expect(calls.slice().sort()).toEqual(['m0', 'm0', 'm1', 'm2', 'm3']);
  });
});
