import { describe, expect, it } from 'vitest';
import { createReceiveProbe, figures } from '../../../lib/queue/rocketmq/receive-probe.js';

describe('receive probe', () => {
  it('counts a message born while its LiteTopic had one unsettled as waiting behind it, others as free', () => {
    const probe = createReceiveProbe((t) => t.split('-')[0]!);
    probe.received(2, 30);
    probe.arrived('realtime-a', 'm1', 1_000, 1_020);
    probe.arrived('batch-b', 'b1', 1_000, 1_010);
    probe.settled('realtime-a', 'm1', 3_000);
    // Born at 1 500 while m1 was unsettled: the broker could not hand it over before 3 000.
    probe.received(1, 1_500);
    probe.arrived('realtime-a', 'm2', 1_500, 3_010);
    probe.settled('realtime-a', 'm2', 3_500);
    // Born after m2 was settled: free.
    probe.received(0, 5_000);
    probe.arrived('realtime-a', 'm3', 4_000, 4_005);
    const s = probe.summary();
    expect(s).toMatchObject({ receives: 3, emptyReceives: 1, messages: 3, maxBatch: 2, peakUnsettled: 2 });
    expect(s.brokerWait.realtime!.behind).toMatchObject({ count: 1, max: 1_510 });
    expect(s.brokerWait.realtime!.free).toMatchObject({ count: 2, max: 20 });
    expect(s.brokerWait.batch!.all.count).toBe(1);
  });

  it('does not count a redelivery as a wait: one still being handled and one already settled are counted apart', () => {
    const probe = createReceiveProbe(() => 'x');
    probe.arrived('x-a', 'm1', 0, 10);
    probe.arrived('x-a', 'm1', 0, 20);
    expect(probe.summary().brokerWait.x!.all.count).toBe(1);
    expect(probe.summary()).toMatchObject({ whileInHand: 1, afterSettled: 0, unsettledNow: 1 });
    probe.settled('x-a', 'm1', 30);
    probe.arrived('x-a', 'm1', 0, 60_000);
    expect(probe.summary()).toMatchObject({ whileInHand: 1, afterSettled: 1, unsettledNow: 0 });
    expect(probe.summary().brokerWait.x!.all).toMatchObject({ count: 1, max: 10 });
    expect(figures([])).toEqual({ count: 0, p50: 0, p99: 0, max: 0 });
  });

  it('says how long after its Suspend ended a message came back', () => {
    const probe = createReceiveProbe(() => 'x');
    probe.arrived('x-a', 'm1', 0, 10);
    probe.settled('x-a', 'm1', 100, 1_000);
    probe.arrived('x-a', 'm1', 0, 2_600);
    expect(probe.summary().lateAfterSuspendMs).toEqual({ count: 1, p50: 1_500, p99: 1_500, max: 1_500 });
  });

  it('counts a return from a Suspend apart from a delivery after an ack, and early returns apart again', () => {
    const probe = createReceiveProbe(() => 'x');
    probe.arrived('x-a', 'm1', 0, 10);
    probe.settled('x-a', 'm1', 100, 5_000);
    // Back as asked: in hand again, so its next settle counts too.
    probe.arrived('x-a', 'm1', 0, 5_100);
    expect(probe.summary()).toMatchObject({ afterSuspend: 1, earlyAfterSuspend: 0, afterSettled: 0, unsettledNow: 1 });
    probe.settled('x-a', 'm1', 5_200, 5_000);
    // Back 2 s before its Suspend ended.
    probe.arrived('x-a', 'm1', 0, 8_200);
    probe.settled('x-a', 'm1', 8_300);
    // Acked, then delivered again.
    probe.arrived('x-a', 'm1', 0, 9_000);
    expect(probe.summary()).toMatchObject({ afterSuspend: 2, earlyAfterSuspend: 1, afterSettled: 1, unsettledNow: 0 });
    // The one back as asked came 0 ms after its Suspend's end; the early one is not counted late.
    expect(probe.summary().lateAfterSuspendMs).toEqual({ count: 1, p50: 0, p99: 0, max: 0 });
    // Its broker wait counted once, at its first arrival.
    expect(probe.summary().brokerWait.x!.all.count).toBe(1);
  });

  it('counts the returns of messages the client suspended on its own, which no handler saw, and leaves out their broker wait', () => {
    const probe = createReceiveProbe(() => 'x');
    // m1 heads its batch and is suspended by its handler; the proxy accepts at 110.
    probe.arrived('x-a', 'm1', 0, 10);
    probe.settled('x-a', 'm1', 100, 5_000);
    probe.suspended('m1', 110, 5_000);
    // m2 sat behind it in the same batch: the client suspended it itself.
    probe.suspended('m2', 120, 5_000);
    expect(probe.summary().suspendedUnseen).toBe(1);
    probe.arrived('x-a', 'm1', 0, 5_150);
    probe.arrived('x-a', 'm2', 0, 5_180);
    const s = probe.summary();
    expect(s).toMatchObject({ afterSuspend: 2, earlyAfterSuspend: 0, suspendedUnseen: 1, unsettledNow: 2 });
    // Late from the proxy's answer on: m1 by 40 ms; m2, handed over with m1 in hand, by 60 ms behind it.
    expect(s.lateAfterSuspendMs).toMatchObject({ count: 1, max: 40 });
    expect(s.lateBehindAfterSuspendMs).toMatchObject({ count: 1, max: 60 });
    // m2's first sight here came after its Suspend: not a broker wait.
    expect(s.brokerWait.x!.all.count).toBe(1);
  });

  it('leaves a Suspend of a copy still in hand here to the one in hand', () => {
    const probe = createReceiveProbe(() => 'x');
    probe.arrived('x-a', 'm1', 0, 10);
    probe.suspended('m1', 20, 5_000);
    expect(probe.summary()).toMatchObject({ suspendedUnseen: 0, unsettledNow: 1 });
  });

  it("puts a return held up behind a message of its LiteTopic in hand here apart from the broker's lateness", () => {
    const probe = createReceiveProbe(() => 'x');
    // m1 and m2 suspended together until 5 100.
    probe.arrived('x-a', 'm1', 0, 10);
    probe.settled('x-a', 'm1', 100, 5_000);
    probe.suspended('m1', 100, 5_000);
    probe.suspended('m2', 100, 5_000);
    // m1 is back on time and held here until 9 000 (waiting for a slot): m2 behind it only after.
    probe.arrived('x-a', 'm1', 0, 5_150);
    probe.settled('x-a', 'm1', 9_000);
    probe.arrived('x-a', 'm2', 0, 9_020);
    const s = probe.summary();
    expect(s.lateAfterSuspendMs).toMatchObject({ count: 1, max: 50 });
    expect(s.lateBehindAfterSuspendMs).toMatchObject({ count: 1, max: 3_920 });
  });
});
