/**
 * seed2-burst's GPU "whenever eligible work waits": during the campaign batch is
 * mostly held by its own pace (one LiteTopic, one bucket), and such work is not
 * eligible for a slot. Eligible work is a request past its pace waiting in the
 * flow-control layer for a slot: the `started` event's slotWaitMs. The lab does
 * not keep that per request, so this test listens to the dispatchers' events
 * itself and measures GPU occupancy (started → completed/failed/retrying) over
 * the time some request waited for a slot.
 */
import { describe, expect, it, vi } from 'vitest';
import type { DispatcherDeps } from '../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../lib/dispatch-events.js';

interface Seen {
  readonly t: number;
  readonly e: DispatchEvent;
}
/** One list per run (each run has its own clock). */
const runs = new Map<unknown, Seen[]>();

vi.mock('../../lib/dispatch/dispatcher.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/dispatch/dispatcher.js')>();
  return {
    ...real,
    createDispatcher: (deps: DispatcherDeps) => {
      let seen = runs.get(deps.clock);
      if (!seen) runs.set(deps.clock, (seen = []));
      const list = seen;
      return real.createDispatcher({
        ...deps,
        onEvent: (e) => {
          list.push({ t: deps.clock.now(), e });
          deps.onEvent?.(e);
        },
      });
    },
  };
});

const { seed2Burst, seed2Full } = await import('../../bench/scenarios/seed2-burst.js');

/** Busy slots ÷ slots over the union of the intervals in which some request waited for a slot. */
function utilizationWhileEligibleWaited(
  seen: readonly Seen[],
  slots: number,
): { utilization: number; waitedMs: number } {
  const intervals: [number, number][] = [];
  const steps: [number, number][] = [];
  const running = new Set<string>();
  for (const { t, e } of seen) {
    if (!('envelope' in e)) continue;
    if (e.type === 'started') {
      running.add(e.envelope.id);
      steps.push([t, 1]);
      if (e.slotWaitMs !== undefined && e.slotWaitMs > 0) intervals.push([t - e.slotWaitMs, t]);
    } else if (
      (e.type === 'completed' || e.type === 'failed' || e.type === 'retrying') &&
      running.delete(e.envelope.id)
    ) {
      steps.push([t, -1]);
    }
  }
  intervals.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [a, b] of intervals) {
    const last = merged[merged.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  steps.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let busy = 0;
  let at = steps[0]?.[0] ?? 0;
  let busySlotMs = 0;
  let i = 0;
  for (const [t, d] of steps) {
    // Busy slot-time between `at` and `t`, counted where it overlaps an interval of waiting.
    while (i < merged.length && merged[i]![1] <= at) i++;
    for (let j = i; j < merged.length && merged[j]![0] < t; j++)
      busySlotMs += busy * Math.max(0, Math.min(t, merged[j]![1]) - Math.max(at, merged[j]![0]));
    busy += d;
    at = t;
  }
  const waitedMs = merged.reduce((sum, [a, b]) => sum + (b - a), 0);
  return { utilization: waitedMs ? busySlotMs / (waitedMs * slots) : 1, waitedMs };
}

describe('seed2-burst (full): the GPU while eligible work waits', () => {
  it(
    'is at least 95 % busy over the time some request past its pace waited for a slot',
    { timeout: 180_000 },
    async () => {
      runs.clear();
      const out = await seed2Burst.run({ seed: 1, size: 'full', flags: {}, log: () => {} });
      const [defaults] = [...runs.values()];
      const { utilization, waitedMs } = utilizationWhileEligibleWaited(defaults!, seed2Full.gpuSlots);
      console.log(
        `seed2-burst full: GPU ${(100 * utilization).toFixed(1)} % busy over ${(waitedMs / 1000).toFixed(1)} s in which eligible work waited; ` +
          `over the whole burst window ${(100 * (out.headline.sluiceGpuUtilizationDuringBurst as number)).toFixed(1)} %`,
      );
      expect(waitedMs).toBeGreaterThan(0);
      expect(utilization).toBeGreaterThanOrEqual(0.95);
    },
  );
});
