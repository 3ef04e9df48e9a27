import { describe, expect, it } from 'vitest';
import { EligibleBusy } from '../../../bench/lib/eligible-busy.js';
import { envelope } from '../../lib/telemetry/helpers.js';

/** Two slots; the test sets how many are busy, and the busy slot-time follows. */
function gpu() {
  let now = 0;
  let busy = 0;
  let busySlotMs = 0;
  const meter = new EligibleBusy(new Map([['m', { slots: 2, busySlotMs: () => busySlotMs }]]), () => now);
  return {
    meter,
    at(t: number, busyNow: number) {
      busySlotMs += (t - now) * busy;
      now = t;
      busy = busyNow;
    },
  };
}

describe('EligibleBusy: how busy the GPU is while requests wait for a slot', () => {
  it('counts only the stretches when a request waits, in flow control or sent back from a full room', () => {
    const g = gpu();
    const a = envelope('t1', 'batch');
    g.at(0, 1);
    g.meter.observe({ type: 'awaiting-slot', envelope: a });
    // Sent back for capacity: it still waits for a slot, in its LiteTopic.
    g.at(100, 1);
    g.meter.observe({ type: 'suspended', envelope: a, ms: 30_000, cause: 'capacity' });
    g.at(300, 2);
    g.meter.observe({ type: 'awaiting-slot', envelope: a });
    g.at(400, 2);
    g.meter.observe({ type: 'started', envelope: a, queueWaitMs: 400 });
    // Nobody waits: an idle GPU now does not count.
    g.at(1_000, 0);
    // 0–300 ms one slot of two busy, 300–400 ms both: (300 + 200) / 800.
    expect(g.meter.utilization()).toBe(0.625);
    expect(g.meter.waitedMs()).toBe(400);
    // Idle: 0–100 ms one slot with it in the room, 100–300 ms one slot with it sent back.
    expect(g.meter.idleShares()).toEqual({ room: 0.125, sentBack: 0.25 });
  });

  it('splits the idle time by where the waiting requests were: one in a room makes it a room stretch', () => {
    const g = gpu();
    const [a, b] = [envelope('t1', 'batch'), envelope('t2', 'batch')];
    g.at(0, 0);
    g.meter.observe({ type: 'awaiting-slot', envelope: a });
    g.meter.observe({ type: 'awaiting-slot', envelope: b });
    g.at(100, 1);
    g.meter.observe({ type: 'suspended', envelope: a, ms: 30_000, cause: 'capacity' });
    g.at(200, 1);
    g.meter.observe({ type: 'suspended', envelope: b, ms: 30_000, cause: 'capacity' });
    g.at(400, 2);
    g.meter.observe({ type: 'expired', envelope: a });
    g.meter.observe({ type: 'expired', envelope: b });
    g.at(1_000, 0);
    // Room 0–200 ms: 200 + 100 idle of 400; sent back 200–400 ms: 200 idle of 400.
    expect(g.meter.idleShares()).toEqual({ room: 0.375, sentBack: 0.25 });
    expect(g.meter.utilization()).toBe(0.375);
  });

  it('a request held back by its pace, or its model paused, no longer waits for a slot', () => {
    const g = gpu();
    const a = envelope('t1', 'batch');
    g.at(0, 2);
    g.meter.observe({ type: 'awaiting-slot', envelope: a });
    g.at(100, 0);
    g.meter.observe({ type: 'suspended', envelope: a, ms: 5_000, cause: 'pace' });
    g.at(500, 0);
    expect(g.meter.utilization()).toBe(1);
    expect(g.meter.waitedMs()).toBe(100);
  });

  it("with a pool per model, counts only the waiting request's own model's pool", () => {
    let now = 0;
    const busy = { m: 0, n: 0 };
    const meter = new EligibleBusy(
      new Map([
        ['m', { slots: 2, busySlotMs: () => busy.m }],
        ['n', { slots: 6, busySlotMs: () => busy.n }],
      ]),
      () => now,
    );
    const a = envelope('t1', 'batch', 0, 'm');
    meter.observe({ type: 'awaiting-slot', envelope: a });
    // 0–1000 ms: m's two slots busy while a waits; n idle, but nothing of n waits.
    now = 1_000;
    busy.m = 2_000;
    meter.observe({ type: 'started', envelope: a, queueWaitMs: 1_000 });
    const b = envelope('t1', 'batch', 0, 'n');
    meter.observe({ type: 'awaiting-slot', envelope: b });
    // 1000–2000 ms: b waits for n, three of its six slots busy.
    now = 2_000;
    busy.n = 3_000;
    meter.observe({ type: 'started', envelope: b, queueWaitMs: 1_000 });
    // (2000 + 3000) / (2 × 1000 + 6 × 1000)
    expect(meter.utilization()).toBe(0.625);
    // Weighted by slots: (2 × 1000 + 6 × 1000) / 8.
    expect(meter.waitedMs()).toBe(1_000);
  });
});
