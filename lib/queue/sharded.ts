/**
 * Spreads a busy LiteTopic over a few physical LiteTopics (`name`, `name-1`, ...).
 *
 * RocketMQ 5.5 serves a LiteTopic first-in-first-out on the broker, one received
 * batch at a time, and a FIFO group runs that batch one message after another: one
 * LiteTopic can have one request at the GPU at a time, which caps a tenant at one
 * request per model latency whatever its pace allows. N shards allow N at once. The
 * leaky bucket is unaffected: the dispatcher paces by the envelope's LiteTopic (the
 * logical one), so every shard books its release from the same bucket, and each
 * shard's Suspend holds back only that shard.
 *
 * A LiteTopic's sends take the shards in turn while it stays active, and start again
 * at shard 0 once it has been quiet for `quietMs`. A message is then behind another of
 * its LiteTopic only if the one sent N sends earlier is still unsettled. (Keyed to the
 * sends of one clock second instead, a tenant sending one request every few seconds
 * stayed on shard 0, and on the broker a third of its realtime requests waited behind
 * the previous one's GPU call.) A tenant sending now and then keeps one LiteTopic on
 * the broker; one that keeps sending uses all N. Order within a LiteTopic is not kept
 * across shards (nothing in Sluice needs it: each message carries its own deadline
 * and pacing books each message's own release).
 */
import type { Clock } from '../clock/clock.js';
import { liteTopicShard } from './lite-topic-name.js';
import type { LiteQueue, MessageHandler, SubscribeOptions, Subscription } from './types.js';

export interface ShardedLiteQueueOptions {
  readonly clock: Clock;
  /** Physical LiteTopics per LiteTopic (1 turns sharding off). */
  readonly shards: number;
  /** LiteTopics whose recent sends are remembered (least recently sent forgotten first). */
  readonly remember?: number;
  /** A LiteTopic without a send for this long goes back to shard 0 (default 10 s: past a realtime request's life). */
  readonly quietMs?: number;
}

const DEFAULT_QUIET_MS = 10_000;

export class ShardedLiteQueue implements LiteQueue {
  private readonly recent = new Map<string, { at: number; next: number }>();
  private readonly remember: number;
  private readonly quietMs: number;

  constructor(
    private readonly inner: LiteQueue,
    private readonly opts: ShardedLiteQueueOptions,
  ) {
    if (!Number.isInteger(opts.shards) || opts.shards < 1)
      throw new Error(`shards must be a positive integer, got ${opts.shards}`);
    this.remember = opts.remember ?? 10_000;
    this.quietMs = opts.quietMs ?? DEFAULT_QUIET_MS;
  }

  /** The physical LiteTopic the next send to `liteTopic` goes to. */
  shardFor(liteTopic: string): string {
    if (this.opts.shards === 1) return liteTopic;
    const now = this.opts.clock.now();
    const seen = this.recent.get(liteTopic);
    const shard = seen && now - seen.at < this.quietMs ? seen.next : 0;
    // Re-inserting keeps the map in least-recently-sent order for the eviction below.
    this.recent.delete(liteTopic);
    this.recent.set(liteTopic, { at: now, next: (shard + 1) % this.opts.shards });
    if (this.recent.size > this.remember) this.recent.delete(this.recent.keys().next().value!);
    return liteTopicShard(liteTopic, shard);
  }

  send(liteTopic: string, body: string): Promise<{ messageId: string }> {
    return this.inner.send(this.shardFor(liteTopic), body);
  }

  subscribe(handler: MessageHandler, options: SubscribeOptions): Subscription {
    return this.inner.subscribe(handler, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
