import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { EmbeddedLiteQueue } from '../../../lib/queue/embedded.js';
import { liteTopicName, liteTopicShard, MAX_LITE_TOPIC_LENGTH } from '../../../lib/queue/lite-topic-name.js';
import { ShardedLiteQueue } from '../../../lib/queue/sharded.js';
import { Consume, type LiteMessage } from '../../../lib/queue/types.js';

const VALID = /^[A-Za-z0-9_-]+$/;
const name = (tier: string, tenant: string, account: string, model: string) =>
  liteTopicName({ tier, tenant, account, model });

describe('liteTopicShard', () => {
  it('shard 0 is the LiteTopic itself; others append -n', () => {
    const name = liteTopicName({ tier: 'batch', tenant: 'acme', account: 'acme-etl', model: 'llama-70b' });
    expect(liteTopicShard(name, 0)).toBe(name);
    expect(liteTopicShard(name, 3)).toBe(`${name}-3`);
  });

  it('stays valid, within 64 bytes and distinct for names at and over the limit', () => {
    const names = [
      name('realtime', 'a'.repeat(30), 'b'.repeat(9), 'm'.repeat(10)), // short, near the limit
      name('realtime', 'a'.repeat(31), 'b'.repeat(9), 'm'.repeat(10)),
      name('realtime', 'tenant.with.dots'.repeat(5), 'acct', 'model/x'), // hashed
      name('realtime', 'tenant.with.dots'.repeat(5), 'acct', 'model/y'),
      name('batch', 'é'.repeat(30), 'a', 'm'),
    ];
    const all = new Set<string>();
    for (const name of names) {
      for (let shard = 0; shard < 12; shard++) {
        const s = liteTopicShard(name, shard);
        expect(s).toMatch(VALID);
        expect(s.length).toBeLessThanOrEqual(MAX_LITE_TOPIC_LENGTH);
        all.add(s);
      }
    }
    expect(all.size).toBe(names.length * 12);
  });
});

describe('ShardedLiteQueue', () => {
  function setup(shards = 4) {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    const inner = new EmbeddedLiteQueue({ clock, maxInFlightPerTopic: 1 });
    const sent: string[] = [];
    const spy = {
      ...inner,
      send: (t: string, b: string) => (sent.push(t), inner.send(t, b)),
      subscribe: inner.subscribe.bind(inner),
      close: inner.close.bind(inner),
    };
    return { clock, inner, sent, queue: new ShardedLiteQueue(spy, { clock, shards }) };
  }

  it('keeps a LiteTopic sending now and then on one physical LiteTopic', async () => {
    const { clock, sent, queue } = setup();
    for (let i = 0; i < 10; i++) {
      await queue.send('batch-acme-m', `m${i}`);
      await clock.advance(10_000);
    }
    expect(new Set(sent)).toEqual(new Set(['batch-acme-m']));
  });

  it('rotates a LiteTopic sending every few seconds over its shards, so a send is not behind the last one', async () => {
    const { clock, sent, queue } = setup(4);
    for (let i = 0; i < 6; i++) {
      await queue.send('realtime-acme-m', `m${i}`);
      await clock.advance(4_000);
    }
    expect(sent).toEqual([
      'realtime-acme-m',
      'realtime-acme-m-1',
      'realtime-acme-m-2',
      'realtime-acme-m-3',
      'realtime-acme-m',
      'realtime-acme-m-1',
    ]);
  });

  it('spreads a burst over every shard, round robin, and other LiteTopics count on their own', async () => {
    const { sent, queue } = setup(4);
    for (let i = 0; i < 8; i++) await queue.send('batch-acme-m', `m${i}`);
    await queue.send('batch-other-m', 'x');
    expect(sent).toEqual([
      'batch-acme-m',
      'batch-acme-m-1',
      'batch-acme-m-2',
      'batch-acme-m-3',
      'batch-acme-m',
      'batch-acme-m-1',
      'batch-acme-m-2',
      'batch-acme-m-3',
      'batch-other-m',
    ]);
  });

  it('lets as many messages of one LiteTopic run at once as it has shards, on an engine running one per LiteTopic', async () => {
    const { clock, queue } = setup(4);
    let running = 0;
    let peak = 0;
    const done: LiteMessage[] = [];
    queue.subscribe(
      async (m) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => clock.setTimer(100, r));
        running--;
        done.push(m);
        return Consume.success;
      },
      { concurrency: 16 },
    );
    for (let i = 0; i < 12; i++) await queue.send('batch-acme-m', `m${i}`);
    await clock.advance(1_000);
    expect(done).toHaveLength(12);
    expect(peak).toBe(4);
    expect(new Set(done.map((m) => m.body))).toEqual(new Set(Array.from({ length: 12 }, (_, i) => `m${i}`)));
    await queue.close();
  });

  it('forgets the least recently sent LiteTopic beyond its memory, and refuses a shard count below 1', async () => {
    const clock = new VirtualClock(0);
    const inner = new EmbeddedLiteQueue({ clock });
    const queue = new ShardedLiteQueue(inner, { clock, shards: 2, remember: 2 });
    expect(queue.shardFor('a')).toBe('a');
    expect(queue.shardFor('b')).toBe('b');
    expect(queue.shardFor('c')).toBe('c'); // 'a' forgotten
    expect(queue.shardFor('a')).toBe('a');
    expect(queue.shardFor('c')).toBe('c-1');
    expect(() => new ShardedLiteQueue(inner, { clock, shards: 0 })).toThrow(/shards/);
    await inner.close();
  });
});
