/**
 * A model's slots as its servers report them, for models whose policy asks
 * (`saturation`): the declared `slots` is only where it starts. The servers' own
 * Prometheus page (vLLM's names, lib/upstream/engine-metrics.ts) says whether they
 * hold more than they run (requests waiting inside the engine) or are near
 * preempting (KV cache), as the saturation detectors of the Gateway API Inference
 * Extension and llm-d read it. Sluice wants the engine's queue empty, so the order
 * of work stays its own scheduler's: a server with requests waiting gets as many
 * slots as it was running (and at least one fewer than before: what waits there
 * may not be ours); one whose KV cache is nearly full one less than it runs; one that
 * runs every slot it is given, with nothing waiting and room in its cache, while
 * the slots hold work back here, one more: probing up as TCP does, and not within
 * `probeAfterMs` of a decrease, since each probe past the servers' true size
 * queues one request inside them until the next read.
 * Metrics that cannot be read bring the slots back to at most the declared ones.
 *
 * Read every `refreshMs` while the model has work (the scheduler asked for its
 * slots since the last read), on a timer rather than when asked: the scheduler asks
 * most right after a call ends, when the server has just moved a waiting request
 * into the freed slot, and reads taken then would never see it queue. An idle model
 * costs its servers nothing. Every dispatcher reads for itself; they read the same
 * servers, so they agree on the budget they share in the store.
 */
import type { CapacityReason } from '../../dispatch-events.js';
import type { Clock } from '../../clock/clock.js';
import type { Model, Saturation } from '../../policy/schema.js';
import { combineLoads, readEngineLoad, type EngineLoad } from '../../upstream/engine-metrics.js';

export interface CapacityState {
  readonly slots: number;
  /** When the servers last said they were saturated; probing up waits `probeAfterMs` after it. */
  readonly saturatedAt: number;
}

export interface CapacityStep {
  readonly state: CapacityState;
  readonly reason?: CapacityReason;
}

const maxSlotsOf = (declaredSlots: number, s: Saturation) => s.maxSlots ?? 4 * declaredSlots;

/**
 * The rule: the next slots from the servers' load (undefined: could not be read).
 * `full`: requests waited here on a full gate since the last read. Only then does a
 * probe up tell anything (the slots were what held work back), and only then is it
 * safe: slots grown while nothing asked for them would all be taken at once by the
 * next burst before a read could take them back (TCP's cwnd validation, RFC 7661).
 */
export function nextCapacity(
  state: CapacityState,
  load: EngineLoad | undefined,
  full: boolean,
  at: number,
  declaredSlots: number,
  s: Saturation,
): CapacityStep {
  const max = maxSlotsOf(declaredSlots, s);
  const clamp = (n: number) => Math.min(max, Math.max(s.minSlots, n));
  const step = (slots: number, reason: CapacityReason, saturatedAt = state.saturatedAt): CapacityStep => {
    const next = { slots: clamp(slots), saturatedAt };
    return next.slots === state.slots ? { state: next } : { state: next, reason };
  };
  if (!load) return step(Math.min(state.slots, declaredSlots), 'unreadable');
  // It holds more than it runs: what it runs at once is what it takes.
  if (load.waiting > s.queueDepthThreshold)
    return step(Math.min(state.slots - 1, load.running + s.queueDepthThreshold), 'engine-queue', at);
  if (load.kvCacheUsage >= s.kvCacheThreshold) return step(Math.min(state.slots, load.running) - 1, 'kv-cache', at);
  // The slots held work back, and the servers run all of them with nothing waiting and room in the cache: try one more.
  const held = full && load.running >= state.slots && load.waiting === 0;
  if (held && at - state.saturatedAt >= s.probeAfterMs) return step(state.slots + 1, 'probe');
  return { state };
}

export interface ModelCapacityDeps {
  readonly clock: Clock;
  /** The Prometheus page of the server at an upstream base URL (UpstreamClient.metrics). */
  readonly scrape: (baseUrl: string, timeoutMs: number) => Promise<string>;
  readonly onChange?: (model: string, slots: number, reason: CapacityReason) => void;
  /** A read failed (also when it then changed nothing). */
  readonly onError?: (model: string, error: unknown) => void;
}

/** What the scheduler asks of a model's slots (flow/scheduler.ts). */
export interface SlotSource {
  /** The model's slots now; keeps its servers' metrics read while it is asked for. */
  slots(model: string, declared: Model): number;
  /** Requests of the model wait on a full gate: the slots hold work back. */
  full(model: string): void;
}

interface Tracked {
  state: CapacityState;
  /** The model as last asked for: its policy and its saturation settings, and when. */
  declared: Model;
  settings: Saturation;
  askedAt: number;
  timer: (() => void) | undefined;
  /** The gate was full since the last read began. */
  full: boolean;
}

export function createModelCapacity(deps: ModelCapacityDeps): SlotSource {
  const models = new Map<string, Tracked>();

  async function load(model: string, declared: Model, timeoutMs: number): Promise<EngineLoad | undefined> {
    try {
      const loads = (await Promise.all(declared.upstreams.map((url) => deps.scrape(url, timeoutMs)))).map(
        readEngineLoad,
      );
      if (loads.every((l): l is EngineLoad => l !== undefined)) return combineLoads(loads);
      deps.onError?.(model, new Error('a metrics page lacks vllm:num_requests_running or vllm:num_requests_waiting'));
    } catch (error) {
      deps.onError?.(model, error);
    }
    return undefined;
  }

  async function read(model: string, t: Tracked): Promise<void> {
    const { declared, settings } = t;
    const full = t.full;
    t.full = false;
    const reading = await load(model, declared, settings.refreshMs);
    const step = nextCapacity(t.state, reading, full, deps.clock.now(), declared.slots, settings);
    t.state = step.state;
    if (step.reason) deps.onChange?.(model, step.state.slots, step.reason);
  }

  /** Reads now, and again every refreshMs for as long as the model is asked for. */
  function keepReading(model: string, t: Tracked): void {
    const readAt = deps.clock.now();
    const reading = read(model, t);
    t.timer = deps.clock.setTimer(t.settings.refreshMs, () => {
      void reading.then(() => {
        t.timer = undefined;
        if (t.askedAt >= readAt && models.get(model) === t) keepReading(model, t);
      });
    });
  }

  return {
    slots(model, declared) {
      const s = declared.saturation;
      if (!s) {
        models.get(model)?.timer?.();
        models.delete(model);
        return declared.slots;
      }
      const now = deps.clock.now();
      let t = models.get(model);
      if (!t)
        models.set(
          model,
          (t = {
            state: { slots: declared.slots, saturatedAt: -Infinity },
            declared,
            settings: s,
            askedAt: now,
            timer: undefined,
            full: false,
          }),
        );
      t.declared = declared;
      t.settings = s;
      t.askedAt = now;
      if (!t.timer) keepReading(model, t);
      // The policy may have moved the bounds since the last read.
      return Math.min(maxSlotsOf(declared.slots, s), Math.max(s.minSlots, t.state.slots));
    },
    full(model) {
      const t = models.get(model);
      if (t) t.full = true;
    },
  };
}
