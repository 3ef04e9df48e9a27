/**
 * The simulated GPU of a world: one pool per model (world.ts `labPools`), each its own
 * simulator with its own slots and queue, as models on separate GPUs are. Sluice reaches a
 * pool by its upstream origin (the policy's `upstreams`), a baseline by the request's model.
 * Figures add up over the pools: busy slot-time over the slot-time of every pool.
 */
import { createGpuSim, type GpuSim, type GpuSimOptions, type GpuSimStats } from '../../functions/gpu-sim/app.js';
import type { Clock } from '../../lib/clock/clock.js';
import type { FetchFunction } from '../../lib/upstream/in-process.js';
import type { MeteredPool } from './eligible-busy.js';
import { labPools, type World } from './world.js';

export interface GpuPools {
  /** Each pool's fetch by its upstream origin, for the in-process upstream client. */
  readonly byOrigin: Readonly<Record<string, FetchFunction>>;
  /** A request to the pool serving `model` (a model no pool serves goes to the first, which answers 404). */
  request(model: string, path: string, init: RequestInit): Promise<Response>;
  /** The pools' figures added up. */
  stats(): GpuSimStats;
  /** Each model's pool: its slots and busy slot-time so far (eligible-busy.ts). */
  readonly byModel: ReadonlyMap<string, MeteredPool>;
  close(): void;
}

/** `options` is one pool's simulator settings for the whole world; each pool gets its own slots and a queue as deep in proportion. */
export function createGpuPools(world: World, clock: Clock, options: Omit<GpuSimOptions, 'clock'>): GpuPools {
  const pools = labPools(world);
  const sims = new Map<string, { sim: GpuSim; origin: string }>();
  for (const pool of pools) {
    const share = pool.slots / world.gpu.slots;
    const queueLimit =
      options.queueLimit === null || options.queueLimit === undefined
        ? options.queueLimit
        : Math.max(1, Math.round(options.queueLimit * share));
    const sim = createGpuSim({
      ...options,
      models: [pool.model],
      slots: pool.slots,
      ...(queueLimit !== undefined ? { queueLimit } : {}),
      clock,
    });
    sims.set(pool.model, { sim, origin: new URL(pool.upstream).origin });
  }
  const first = sims.values().next().value!;
  return {
    byOrigin: Object.fromEntries([...sims.values()].map(({ sim, origin }) => [origin, sim.app.fetch])),
    request: (model, path, init) => Promise.resolve((sims.get(model) ?? first).sim.app.request(path, init)),
    stats: () => addUp([...sims.values()].map(({ sim }) => sim.stats())),
    byModel: new Map(
      [...sims].map(([model, { sim }]) => [
        model,
        { slots: sim.stats().slots, busySlotMs: () => busySlotMs(sim.stats()) },
      ]),
    ),
    close: () => {
      for (const { sim } of sims.values()) sim.close();
    },
  };
}

/** A pool's busy slot-time so far. */
export const busySlotMs = (s: GpuSimStats) => s.utilization * s.uptimeMs * s.slots;

function addUp(all: readonly GpuSimStats[]): GpuSimStats {
  if (all.length === 1) return all[0]!;
  const sum = (f: (s: GpuSimStats) => number) => all.reduce((n, s) => n + f(s), 0);
  const slots = sum((s) => s.slots);
  const uptimeMs = Math.max(...all.map((s) => s.uptimeMs));
  const busy = sum(busySlotMs);
  return {
    name: all.map((s) => s.name).join('+'),
    slots,
    slotsBusy: sum((s) => s.slotsBusy),
    queueLength: sum((s) => s.queueLength),
    queueLimit: all.some((s) => s.queueLimit === null) ? null : sum((s) => s.queueLimit ?? 0),
    served: sum((s) => s.served),
    rejected429: sum((s) => s.rejected429),
    rejected503: sum((s) => s.rejected503),
    faults: sum((s) => s.faults),
    aborted: sum((s) => s.aborted),
    // Each pool's own peak, added: an upper bound on the peak of them together.
    peakBusy: sum((s) => s.peakBusy),
    peakQueue: sum((s) => s.peakQueue),
    promptTokens: sum((s) => s.promptTokens),
    completionTokens: sum((s) => s.completionTokens),
    utilization: uptimeMs > 0 && slots > 0 ? busy / (uptimeMs * slots) : 0,
    uptimeMs,
  };
}
