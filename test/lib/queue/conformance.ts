/**
 * One behavioural suite for every LiteQueue engine (embedded and RocketMQ), on the
 * wall clock because a real broker cannot run on a virtual one. Deliveries are
 * at-least-once on the broker, so checks are about order, loss and isolation, and
 * duplicates are tolerated where an engine may produce them (after a restart).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  Consume,
  type ConsumeResult,
  type DeadLetter,
  type LiteMessage,
  type LiteQueue,
  type Recall,
} from '../../../lib/queue/types.js';

export interface QueueUnderTestOptions {
  readonly maxAttempts: number;
  readonly retryBackoffMs: (failures: number) => number;
  readonly onDeadLetter: (deadLetter: DeadLetter) => void;
}

export interface QueueUnderTest {
  readonly queue: LiteQueue;
  /** Resolves when subscriptions made so far are really consuming (a broker consumer connects asynchronously). */
  readonly ready?: () => Promise<void>;
  /** Releases what `makeQueue` set up besides the queue. */
  readonly dispose?: () => Promise<void>;
}

export interface ConformanceOptions {
  /** LiteTopics in the "many LiteTopics" case. */
  readonly manyLiteTopics: number;
  /** Upper bound for one delivery to show up. */
  readonly deliveryTimeoutMs?: number;
}

export function runLiteQueueConformance(
  name: string,
  makeQueue: (opts: QueueUnderTestOptions) => Promise<QueueUnderTest>,
  conformance: ConformanceOptions,
): void {
  const deliveryTimeoutMs = conformance.deliveryTimeoutMs ?? 30_000;
  const disposers: Array<() => Promise<void>> = [];

  afterEach(async () => {
    for (const dispose of disposers.splice(0).reverse()) await dispose();
  });

  async function open(overrides: Partial<QueueUnderTestOptions> = {}) {
    const deadLetters: DeadLetter[] = [];
    const q = await makeQueue({
      maxAttempts: 3,
      retryBackoffMs: () => 100,
      onDeadLetter: (d) => void deadLetters.push(d),
      ...overrides,
    });
    disposers.push(async () => {
      await q.queue.close();
      await q.dispose?.();
    });
    return { ...q, deadLetters, ready: q.ready ?? (async () => undefined) };
  }

  async function until(what: string, check: () => boolean, timeoutMs = deliveryTimeoutMs): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${name}: timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** Names unique per run: a broker keeps LiteTopics of earlier runs around. */
  const lt = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

  describe(`LiteQueue conformance: ${name}`, () => {
    it('keeps order within each LiteTopic while several LiteTopics run concurrently', async () => {
      const { queue, ready } = await open();
      const topics = [lt('a'), lt('b'), lt('c'), lt('d')];
      const seen = new Map<string, number[]>();
      let handled = 0;
      let running = 0;
      let maxRunning = 0;
      queue.subscribe(
        async (m) => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await pause(Number(m.body) % 3);
          running--;
          seen.set(m.liteTopic, [...(seen.get(m.liteTopic) ?? []), Number(m.body)]);
          handled++;
          return Consume.success;
        },
        { concurrency: 3 },
      );
      await ready();
      for (let i = 0; i < 20; i++) await Promise.all(topics.map((t) => queue.send(t, String(i))));
      await until('80 deliveries', () => handled >= 80);
      for (const t of topics) expect(seen.get(t), t).toEqual([...Array(20).keys()]);
      expect(maxRunning).toBeLessThanOrEqual(3);
    });

    it('a handler that releases its worker lets the next delivery start while it goes on; close waits for it', async () => {
      const { queue, ready } = await open();
      const [long, next] = [lt('long'), lt('next')];
      const started: string[] = [];
      let finishLong!: () => void;
      const longMayEnd = new Promise<void>((resolve) => (finishLong = resolve));
      let longEnded = false;
      const subscription = queue.subscribe(
        async (m, worker) => {
          started.push(m.body);
          if (m.body !== 'long') return Consume.success;
          worker?.release();
          worker?.release(); // twice is once
          await longMayEnd;
          longEnded = true;
          return Consume.success;
        },
        { concurrency: 1 },
      );
      await ready();
      await queue.send(long, 'long');
      await until('the long handler to start', () => started.includes('long'));
      await queue.send(next, 'n0');
      await queue.send(next, 'n1');
      // One worker: only the released place lets these in while the long handler still runs.
      await until('the next LiteTopic to be served', () => started.includes('n1'));
      expect(longEnded).toBe(false);
      let closed = false;
      const closing = subscription.close().then(() => (closed = true));
      await pause(200);
      expect(closed, 'close waits for a handler that released its worker').toBe(false);
      finishLong();
      await closing;
      expect(longEnded).toBe(true);
      expect(started.filter((b) => b === 'long')).toEqual(['long']);
    });

    it('Suspend pauses only its LiteTopic and then redelivers the same message first', async () => {
      const { queue, ready } = await open();
      const slow = lt('slow');
      const fast = lt('fast');
      const log: Array<{ body: string; at: number; attempt: number }> = [];
      let suspendedAt = 0;
      queue.subscribe(
        async (m) => {
          log.push({ body: m.body, at: Date.now(), attempt: m.attempt });
          if (m.body === 's0' && suspendedAt === 0) {
            suspendedAt = Date.now();
            return Consume.suspend(1_500);
          }
          return Consume.success;
        },
        { concurrency: 2 },
      );
      await ready();
      await queue.send(slow, 's0');
      await queue.send(slow, 's1');
      await until('s0 to be suspended', () => suspendedAt > 0);
      await queue.send(fast, 'f0');
      await queue.send(fast, 'f1');
      await until('s1', () => log.some((e) => e.body === 's1'));

      const fastDone = Math.max(...log.filter((e) => e.body.startsWith('f')).map((e) => e.at));
      expect(fastDone - suspendedAt, 'the other LiteTopic is served during the pause').toBeLessThan(1_500);
      const slowLog = log.filter((e) => e.body.startsWith('s'));
      expect(slowLog.map((e) => e.body)).toEqual(['s0', 's0', 's1']);
      expect(slowLog[1]!.at - suspendedAt).toBeGreaterThanOrEqual(1_400);
      expect(
        slowLog.map((e) => e.attempt),
        'Suspend is not a failure',
      ).toEqual([1, 1, 1]);
    });

    it('a recalled Suspend ends at once, the message first; a recall once it is back changes nothing', async () => {
      const { queue, ready } = await open();
      const topic = lt('recall');
      const log: Array<{ body: string; at: number }> = [];
      let recall: Recall | undefined;
      let suspendedAt = 0;
      queue.subscribe(
        async (m) => {
          log.push({ body: m.body, at: Date.now() });
          if (m.body === 'r0' && suspendedAt === 0) {
            suspendedAt = Date.now();
            return Consume.suspend(60_000, (r) => (recall = r));
          }
          return Consume.success;
        },
        { concurrency: 2 },
      );
      await ready();
      await queue.send(topic, 'r0');
      await queue.send(topic, 'r1');
      await until('the Suspend to be recallable', () => recall !== undefined);
      await pause(300);
      const recalledAt = Date.now();
      expect(await recall!(), 'the pause was ended').toBe(true);
      await until('r1', () => log.some((e) => e.body === 'r1'));
      expect(log.map((e) => e.body)).toEqual(['r0', 'r0', 'r1']);
      expect(log[1]!.at - recalledAt, 'back long before its 60 s').toBeLessThan(5_000);
      expect(await recall!(), 'nothing left to end').toBe(false);
    });

    it('redelivers a failed message with a growing attempt and dead-letters it at the limit, keeping the LiteTopic in order', async () => {
      const { queue, ready, deadLetters } = await open({ maxAttempts: 3, retryBackoffMs: () => 200 });
      const topic = lt('failing');
      const log: Array<{ body: string; attempt: number }> = [];
      queue.subscribe(
        async (m: LiteMessage): Promise<ConsumeResult> => {
          log.push({ body: m.body, attempt: m.attempt });
          return m.body === 'bad' ? Consume.failure('upstream 500') : Consume.success;
        },
        { concurrency: 2 },
      );
      await ready();
      await queue.send(topic, 'bad');
      await queue.send(topic, 'next');
      await until('the message after the bad one', () => log.some((e) => e.body === 'next'));

      expect(log).toEqual([
        { body: 'bad', attempt: 1 },
        { body: 'bad', attempt: 2 },
        { body: 'bad', attempt: 3 },
        { body: 'next', attempt: 1 },
      ]);
      expect(deadLetters).toHaveLength(1);
      expect(deadLetters[0]!.message.body).toBe('bad');
      expect(deadLetters[0]!.message.liteTopic).toBe(topic);
      expect(deadLetters[0]!.reason).toContain('upstream 500');
    });

    it('consumes a LiteTopic first created after the consumer started', async () => {
      const { queue, ready } = await open();
      const got = new Map<string, string[]>();
      queue.subscribe(
        async (m) => {
          got.set(m.liteTopic, [...(got.get(m.liteTopic) ?? []), m.body]);
          return Consume.success;
        },
        { concurrency: 4 },
      );
      await ready();
      await pause(2_000);
      const fresh = [lt('new1'), lt('new2'), lt('new3')];
      for (const t of fresh) for (let i = 0; i < 3; i++) await queue.send(t, `${t}/${i}`);
      await until('every new LiteTopic', () => fresh.every((t) => (got.get(t)?.length ?? 0) >= 3));
      for (const t of fresh) expect(got.get(t)).toEqual([0, 1, 2].map((i) => `${t}/${i}`));
    });

    it('loses nothing across a consumer restart', async () => {
      const { queue, ready } = await open();
      const topics = Array.from({ length: 10 }, (_, i) => lt(`r${i}`));
      const total = 200;
      for (let i = 0; i < total; i++) await queue.send(topics[i % topics.length]!, String(i));

      const seen = new Set<string>();
      let handledFirst = 0;
      const handler = async (m: LiteMessage) => {
        await pause(5);
        seen.add(m.body);
        handledFirst++;
        return Consume.success;
      };
      const first = queue.subscribe(handler, { concurrency: 4 });
      await ready();
      await until('some deliveries before the restart', () => handledFirst >= 40);
      await first.close();
      const beforeRestart = seen.size;
      expect(beforeRestart).toBeLessThan(total);

      queue.subscribe(handler, { concurrency: 4 });
      await ready();
      await until('every message after the restart', () => seen.size >= total, deliveryTimeoutMs * 2);
      expect(seen.size).toBe(total);
    });

    it(
      `delivers each of ${conformance.manyLiteTopics} LiteTopics`,
      async () => {
        const { queue, ready } = await open();
        const prefix = lt('many');
        const n = conformance.manyLiteTopics;
        const got = new Set<string>();
        queue.subscribe(
          async (m) => {
            got.add(m.liteTopic);
            return Consume.success;
          },
          { concurrency: 64 },
        );
        await ready();
        const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
        // Sends in waves, as many edges would, not one at a time.
        for (let i = 0; i < n; i += 200) await Promise.all(names.slice(i, i + 200).map((t) => queue.send(t, t)));
        await until(`${n} LiteTopics delivered`, () => got.size >= n, Math.max(deliveryTimeoutMs, n * 20));
        expect(names.every((t) => got.has(t))).toBe(true);
      },
      Math.max(120_000, conformance.manyLiteTopics * 30),
    );
  });
}
