/**
 * The LiteTopics this process has seen and how many messages wait in each: from the
 * queue when it can tell (the embedded engine), else counted from events (admitted
 * minus finished). Bounded: idle LiteTopics with nothing waiting are forgotten after
 * a quarter hour, and at `maxTopics` the empty ones go at once.
 */
import type { Clock } from '../clock/clock.js';

export interface LiteTopicInfo {
  readonly tier: string;
  readonly tenant: string;
  readonly model: string;
  /** The account last seen sending to it: its pace is the LiteTopic's. */
  readonly account: string | undefined;
}

export interface LiteTopicDepth extends LiteTopicInfo {
  readonly liteTopic: string;
  readonly depth: number;
}

export interface LiteTopicDepthsOptions {
  readonly clock: Clock;
  /** Messages waiting in a LiteTopic, when the queue can tell. */
  readonly depth?: (liteTopic: string) => number;
  readonly idleMs?: number;
  readonly maxTopics?: number;
}

interface Entry {
  readonly tier: string;
  readonly tenant: string;
  readonly model: string;
  account: string | undefined;
  /** Admitted minus finished, counted from events. */
  pending: number;
  lastSeen: number;
}

type Flow = { readonly tier: string; readonly tenant: string; readonly model: string };

export class LiteTopicDepths {
  private readonly topics = new Map<string, Entry>();
  private readonly clock: Clock;
  private readonly depthSource: ((liteTopic: string) => number) | undefined;
  private readonly idleMs: number;
  private readonly maxTopics: number;

  constructor(options: LiteTopicDepthsOptions) {
    this.clock = options.clock;
    this.depthSource = options.depth;
    this.idleMs = options.idleMs ?? 15 * 60_000;
    this.maxTopics = options.maxTopics ?? 50_000;
  }

  /** A request was admitted to `liteTopic` by `account`. */
  admitted(liteTopic: string, flow: Flow, account: string): LiteTopicDepth {
    const t = this.touch(liteTopic, flow);
    t.pending++;
    t.account = account;
    return this.row(liteTopic, t);
  }

  /** A delivery of `liteTopic` was seen (its sender is the LiteTopic's account from now). */
  seen(liteTopic: string, flow: Flow, account: string): void {
    this.touch(liteTopic, flow).account = account;
  }

  /** A request of `liteTopic` left it for good: completed, failed, expired or dead-lettered. */
  finished(liteTopic: string, flow: Flow): void {
    const t = this.touch(liteTopic, flow);
    t.pending = Math.max(0, t.pending - 1);
  }

  /** Every LiteTopic known, with what waits in it now (idle ones forgotten first). */
  *depths(): IterableIterator<LiteTopicDepth> {
    this.prune(false);
    for (const [name, t] of this.topics) yield this.row(name, t);
  }

  private row(liteTopic: string, t: Entry): LiteTopicDepth {
    const { tier, tenant, model, account } = t;
    return { liteTopic, tier, tenant, model, account, depth: this.depthOf(liteTopic, t) };
  }

  private touch(liteTopic: string, flow: Flow): Entry {
    let t = this.topics.get(liteTopic);
    if (!t) {
      if (this.topics.size >= this.maxTopics) this.prune(true);
      t = { tier: flow.tier, tenant: flow.tenant, model: flow.model, account: undefined, pending: 0, lastSeen: 0 };
      this.topics.set(liteTopic, t);
    }
    t.lastSeen = this.clock.now();
    return t;
  }

  private depthOf(liteTopic: string, t: Entry): number {
    return this.depthSource ? this.depthSource(liteTopic) : t.pending;
  }

  private prune(force: boolean): void {
    const now = this.clock.now();
    for (const [name, t] of this.topics)
      if ((force || now - t.lastSeen > this.idleMs) && this.depthOf(name, t) === 0) this.topics.delete(name);
  }
}
