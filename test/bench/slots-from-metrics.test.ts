import { describe, expect, it } from 'vitest';
import { slotsFromMetrics } from '../../bench/scenarios/slots-from-metrics.js';

describe('slots-from-metrics (seed2-burst, small: 8 GPU slots declared as 4 and as 16)', () => {
  it(
    'comes out as the right slots do, where trusting the wrong ones idles the GPU or queues inside it',
    { timeout: 120_000 },
    async () => {
      const out = await slotsFromMetrics.run({ seed: 1, size: 'small', flags: {}, log: () => {} });
      const h = out.headline as Record<string, number>;
      console.log(`slots-from-metrics small: ${JSON.stringify(out.headline)}`);
      // Half the slots trusted: the GPU idles while the burst waits. Read from the metrics: as busy as declared right.
      expect(h.halfGpuUtilizationDuringBurst).toBeLessThan(0.6);
      expect(h.halfMetricsGpuUtilizationDuringBurst).toBeGreaterThanOrEqual(0.97 * h.rightGpuUtilizationDuringBurst!);
      expect(h.halfMetricsSlotsMaxInBurst).toBeGreaterThanOrEqual(8);
      // Twice the slots trusted: most of the burst queues inside the GPU, out of Sluice's order.
      // Read from the metrics: until the first read of the burst the declared slots stand, so the
      // GPU's queue may reach what the declaration overshoots (twice the GPU's slots less its slots:
      // its slots) once; after it, only the probes past the GPU's size wait there.
      expect(h.doubleQueuedInsideGpu).toBeGreaterThan(10 * h.doubleMetricsQueuedInsideGpu!);
      expect(h.doubleMetricsGpuPeakQueue).toBeLessThanOrEqual(h.gpuSlots!);
      expect(h.doubleMetricsSlotsMaxInBurst).toBeLessThanOrEqual(9);
      for (const key of ['right', 'rightMetrics', 'halfMetrics', 'doubleMetrics']) {
        expect(h[`${key}RealtimeSuccess`]).toBe(1);
        expect(h[`${key}BatchAbsorbed`]).toBe(1);
        expect(h[`${key}GpuRefused`]).toBe(0);
      }
    },
  );
});
