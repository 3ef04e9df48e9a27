/**
 * What the lab runs Sluice on. The embedded engine: a VirtualClock per run, the
 * in-process store, engine and result channel; deterministic and much faster than
 * real time. The real engine (real-engine.ts): the wall clock, redis-server and
 * RocketMQ 5.5. Scenarios and the two systems only see this interface.
 */
import type { Clock } from '../../lib/clock/clock.js';
import { VirtualClock } from '../../lib/clock/virtual-clock.js';
import type { PolicyInput } from '../../lib/policy/schema.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import type { DeadLetter, LiteQueue } from '../../lib/queue/types.js';
import { createEmbeddedResults } from '../../lib/results/embedded.js';
import type { ResultChannel } from '../../lib/results/types.js';
import { createEmbeddedAttempts, type AttemptStore } from '../../lib/store/attempts.js';
import { createEmbeddedStore } from '../../lib/store/embedded.js';
import type { RateStore } from '../../lib/store/types.js';
import { inFlightPerTopicOf, LAB_EPOCH, type World } from './world.js';

export type EngineName = 'embedded' | 'real';

/** One run's time: where the trace's t = 0 is, and how time passes. */
export interface Timeline {
  readonly clock: Clock;
  readonly start: number;
  /** Lets time pass until `at`: a virtual clock fires its timers on the way, the wall clock waits. */
  until(at: number): Promise<void>;
  /** Progress lines every so often while a run goes on (real time only; a virtual run takes seconds). */
  readonly progressEveryMs?: number;
  /**
   * Virtual time only: a timer of the lab's own bookkeeping (samples, progress), which
   * does not count as something left to happen in the system under test.
   */
  housekeeping?(ms: number, fn: () => void): () => void;
  /** Virtual time only: timers left to fire, the lab's bookkeeping not counted. 0 with requests unanswered: a stall. */
  pendingTimers?(): number;
}

/** A virtual timeline: the clock fires timers only as the run lets time pass, so a stall shows as none left. */
export function virtualTimeline(start: number): Timeline {
  const clock = new VirtualClock(start);
  let housekeeping = 0;
  return {
    clock,
    start,
    until: (at) => clock.runUntil(at),
    housekeeping(ms, fn) {
      let live = true;
      housekeeping++;
      const cancel = clock.setTimer(ms, () => {
        live = false;
        housekeeping--;
        fn();
      });
      return () => {
        if (!live) return;
        live = false;
        housekeeping--;
        cancel();
      };
    },
    pendingTimers: () => clock.pending - housekeeping,
  };
}

/** The shared parts Sluice's edge and dispatcher run on. */
export interface SluiceBackend {
  readonly store: RateStore;
  readonly queue: LiteQueue;
  readonly results: ResultChannel;
  /**
   * The requests' attempt records, one set for every dispatcher of the run as the deployed
   * processes share them (functions/runtime/parts.ts): a dispatcher's own in-memory set let a
   * message delivered again while its first delivery's call ran be called again by the other
   * dispatcher (`mixed-overload --dispatchers 2`, seed 2: 11 second GPU calls, the big tenant's long ones).
   */
  readonly attempts: AttemptStore;
  /** Which implementation each part is, for the report. */
  readonly describe: Readonly<Record<string, string>>;
  /** Messages of one LiteTopic in flight at once, as the engine runs it. */
  readonly inFlightPerTopic: number;
  /** Messages waiting in a LiteTopic, where the engine can tell (telemetry counts events otherwise). */
  readonly depth?: (liteTopic: string) => number;
  /**
   * One set of parts per dispatcher, when the engine gives each its own connections and
   * consumer (the real engine with `dispatchers` > 1: separate RocketMQ consumer clients of
   * one group, each with its own Redis connections). Without it the dispatchers take the
   * one queue's deliveries in turn.
   */
  readonly dispatchers?: readonly DispatcherBackend[];
  /** Engine counters, where the engine keeps them. */
  queueStats?(): { readonly liteTopics: number; readonly deadLettered: number; readonly delivered: number };
  close(): Promise<void>;
}

/** What one dispatcher of a run consumes from and writes to. */
export interface DispatcherBackend {
  readonly store: RateStore;
  readonly queue: LiteQueue;
  readonly results: ResultChannel;
  readonly attempts: AttemptStore;
}

export interface BackendOptions {
  /** Messages the engine itself gives up on; the dispatcher settles them so the client gets an answer. */
  readonly settleDeadLetter: (deadLetter: DeadLetter) => Promise<void>;
}

export interface LabEngine {
  readonly name: EngineName;
  /** A fresh timeline for one system's run; runs of one comparison get the same start. */
  timeline(start?: number): Timeline;
  /** Fresh parts for one Sluice run (nothing carried over from an earlier run). */
  sluice(world: World, policy: PolicyInput, timeline: Timeline, options: BackendOptions): Promise<SluiceBackend>;
  /** Sluice and the baseline: one after the other on virtual clocks, side by side on the wall clock. */
  pair<A, B>(a: () => Promise<A>, b: () => Promise<B>): Promise<[A, B]>;
  close(): Promise<void>;
}

export const embeddedEngine: LabEngine = {
  name: 'embedded',
  timeline(start = LAB_EPOCH) {
    return virtualTimeline(start);
  },
  async sluice(world, _policy, { clock }, { settleDeadLetter }) {
    const inFlightPerTopic = inFlightPerTopicOf(world);
    const queue = new EmbeddedLiteQueue({
      clock,
      maxInFlightPerTopic: inFlightPerTopic,
      onDeadLetter: (d) => void settleDeadLetter(d),
    });
    return {
      store: createEmbeddedStore(clock),
      queue,
      results: createEmbeddedResults({ clock }),
      attempts: createEmbeddedAttempts(clock),
      describe: { store: 'embedded', queue: 'embedded', results: 'embedded' },
      inFlightPerTopic,
      depth: (liteTopic) => queue.depth(liteTopic),
      queueStats: () => queue.stats(),
      close: () => queue.close(),
    };
  },
  async pair(a, b) {
    // One at a time: each run drives its own virtual clock and must not interleave with the other.
    const first = await a();
    return [first, await b()];
  },
  async close() {},
};
