import { describe, expect, it } from 'vitest';
import { sleep } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { EmbeddedLiteQueue } from '../../../lib/queue/embedded.js';
import { Consume, type ConsumeResult, type LiteMessage } from '../../../lib/queue/types.js';

describe('embedded LiteTopic engine', () => {
  it('delivers each LiteTopic in order and takes turns between LiteTopics', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock });
    for (let i = 0; i < 5; i++) {
      await q.send('a', `a${i}`);
      await q.send('b', `b${i}`);
    }
    const seen: string[] = [];
    const sub = q.subscribe(
      async (m) => {
        seen.push(m.body);
        await sleep(clock, 10);
        return Consume.success;
      },
      { concurrency: 1 },
    );
    await clock.advance(1_000);
    expect(seen).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3', 'b3', 'a4', 'b4']);
    await sub.close();
  });

  it('keeps order within a LiteTopic under concurrency', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock });
    for (let i = 0; i < 50; i++) await q.send(`t${i % 5}`, String(i));
    const perTopic = new Map<string, number[]>();
    q.subscribe(
      async (m) => {
        await sleep(clock, 1 + (Number(m.body) % 7));
        perTopic.set(m.liteTopic, [...(perTopic.get(m.liteTopic) ?? []), Number(m.body)]);
        return Consume.success;
      },
      { concurrency: 8 },
    );
    await clock.advance(1_000);
    for (const list of perTopic.values()) expect(list).toEqual([...list].sort((x, y) => x - y));
    expect([...perTopic.values()].flat()).toHaveLength(50);
  });

  it('suspend pauses only its LiteTopic and redelivers the same message after the pause', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock });
    await q.send('slow', 's0');
    await q.send('slow', 's1');
    await q.send('fast', 'f0');
    await q.send('fast', 'f1');
    const log: Array<[number, string]> = [];
    let suspended = false;
    q.subscribe(
      async (m) => {
        log.push([clock.now(), m.body]);
        if (m.body === 's0' && !suspended) {
          suspended = true;
          return Consume.suspend(300);
        }
        return Consume.success;
      },
      { concurrency: 1 },
    );
    await clock.advance(1_000);
    expect(log).toEqual([
      [0, 's0'],
      [0, 'f0'],
      [0, 'f1'],
      [300, 's0'],
      [300, 's1'],
    ]);
  });

  it('redelivers a failed message with backoff, then dead-letters it after the attempt limit', async () => {
    const clock = new VirtualClock(0);
    const dead: string[] = [];
    const q = new EmbeddedLiteQueue({
      clock,
      maxAttempts: 3,
      retryBackoffMs: (n) => 100 * n,
      onDeadLetter: (d) => dead.push(`${d.message.body}:${d.reason}`),
    });
    await q.send('t', 'bad');
    await q.send('t', 'good');
    const attempts: Array<[number, string, number]> = [];
    q.subscribe(
      async (m: LiteMessage): Promise<ConsumeResult> => {
        attempts.push([clock.now(), m.body, m.attempt]);
        return m.body === 'bad' ? Consume.failure('upstream 500') : Consume.success;
      },
      { concurrency: 4 },
    );
    await clock.advance(10_000);
    expect(attempts).toEqual([
      [0, 'bad', 1],
      [100, 'bad', 2],
      [300, 'bad', 3],
      [300, 'good', 1],
    ]);
    expect(dead).toEqual(['bad:upstream 500']);
    expect(q.deadLetters()).toHaveLength(1);
  });

  it('a handler that throws counts as a failure', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock, maxAttempts: 1 });
    await q.send('t', 'x');
    q.subscribe(
      async () => {
        throw new Error('boom');
      },
      { concurrency: 1 },
    );
    await clock.advance(10);
    expect(q.deadLetters()[0]?.reason).toBe('boom');
  });

  it('redelivers a message whose handler never returns, and ignores its late answer', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock, invisibleTimeoutMs: 1_000, retryBackoffMs: () => 0 });
    await q.send('t', 'x');
    const deliveries: number[] = [];
    q.subscribe(
      async (m) => {
        deliveries.push(m.attempt);
        if (m.attempt === 1) await new Promise(() => {}); // hangs forever
        return Consume.success;
      },
      { concurrency: 2 },
    );
    await clock.advance(5_000);
    expect(deliveries).toEqual([1, 2]);
    expect(q.stats()).toMatchObject({ queued: 0, deadLettered: 0 });
  });

  it('reclaims LiteTopics idle past the TTL, and only those', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock, idleTtlMs: 60_000 });
    q.subscribe(async () => Consume.success, { concurrency: 4 });
    await q.send('old', 'x');
    await clock.advance(30_000);
    await q.send('young', 'y');
    await q.send('waiting', 'z');
    await clock.advance(1);
    expect(q.stats().liteTopics).toBe(3);
    await clock.advance(30_000);
    expect(q.reclaimIdle()).toBe(1);
    expect(q.stats().liteTopics).toBe(2);
    await clock.advance(30_000);
    expect(q.reclaimIdle()).toBe(2);
    // A reclaimed LiteTopic is created again on its next send.
    await q.send('old', 'again');
    expect(q.stats().liteTopics).toBe(1);
  });

  it('a consumer restart loses nothing', async () => {
    const clock = new VirtualClock(0);
    const q = new EmbeddedLiteQueue({ clock });
    for (let i = 0; i < 20; i++) await q.send(`t${i % 3}`, String(i));
    const got: string[] = [];
    const handler = async (m: LiteMessage) => {
      await sleep(clock, 10);
      got.push(m.body);
      return Consume.success;
    };
    const first = q.subscribe(handler, { concurrency: 2 });
    await clock.advance(35);
    const closing = first.close();
    await clock.advance(10);
    await closing;
    const before = got.length;
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(20);
    q.subscribe(handler, { concurrency: 2 });
    await clock.advance(1_000);
    expect([...got].sort()).toEqual(Array.from({ length: 20 }, (_, i) => String(i)).sort());
  });
});
