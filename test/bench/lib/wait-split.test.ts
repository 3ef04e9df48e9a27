import { describe, expect, it } from 'vitest';
import { WaitTracker, waitSplitFigures } from '../../../bench/lib/wait-split.js';
import { envelope } from '../../lib/telemetry/helpers.js';

describe('deliveries per request, by what came before each', () => {
  it('counts a return from a Suspend or a failure by its cause, and a delivery while in hand apart', () => {
    const tracker = new WaitTracker();
    const e = envelope('acme', 'batch', 0);
    const delivered = (at: number) =>
      tracker.observe({ type: 'delivered', envelope: e, attempt: 1, first: at === 10, sinceEnqueueMs: at }, at);
    delivered(10);
    tracker.observe({ type: 'suspended', envelope: e, ms: 1_000, cause: 'capacity', heldMs: 40 }, 50);
    delivered(1_050);
    tracker.observe({ type: 'suspended', envelope: e, ms: 200, cause: 'pace' }, 1_060);
    delivered(1_260);
    // Its invisible time ran out under the dispatcher: the engine gives it again, nothing was settled.
    delivered(61_260);
    tracker.observe({ type: 'retrying', envelope: e, attempt: 1, reason: 'upstream 503' }, 61_300);
    delivered(62_300);
    tracker.observe({ type: 'started', envelope: e, queueWaitMs: 62_300, slotWaitMs: 0 }, 62_300);
    tracker.observe({ type: 'completed', envelope: e, status: 200, totalMs: 63_300, upstreamMs: 1_000 }, 63_300);
    const t = tracker.trace(e.id);
    expect(t.again).toEqual({ pace: 1, capacity: 1, paused: 0, other: 1, inHand: 1 });

    const once = envelope('acme', 'batch', 0);
    tracker.observe({ type: 'delivered', envelope: once, attempt: 1, first: true, sinceEnqueueMs: 5 }, 5);
    tracker.observe({ type: 'started', envelope: once, queueWaitMs: 5 }, 5);
    tracker.observe({ type: 'completed', envelope: once, status: 200, totalMs: 100, upstreamMs: 90 }, 100);

    const figures = waitSplitFigures([
      { wait: t, sentAt: 0, answeredAt: 63_400 },
      { wait: tracker.trace(once.id), sentAt: 0, answeredAt: 100 },
    ]);
    expect(figures?.deliveries).toMatchObject({
      n: 2,
      mean: 3,
      max: 5,
      again: { pace: 0.5, capacity: 0.5, paused: 0, other: 0.5, inHand: 0.5 },
    });
  });
});
