import { describe, expect, it } from 'vitest';
import { observeSuspends, PendingRecalls } from '../../../lib/queue/rocketmq/recall.js';

/** Just enough of the client's ChangeInvisibleDuration request and response. */
class FakeDuration {
  constructor(
    public seconds = 0,
    public nanos = 0,
  ) {}
  clone() {
    return new FakeDuration(this.seconds, this.nanos);
  }
  getSeconds() {
    return this.seconds;
  }
  getNanos() {
    return this.nanos;
  }
  setSeconds(s: number) {
    this.seconds = s;
    return this;
  }
  setNanos(n: number) {
    this.nanos = n;
    return this;
  }
}
class FakeRequest {
  constructor(
    public handle: string,
    public duration: FakeDuration,
    public suspend = true,
  ) {}
  clone() {
    return new FakeRequest(this.handle, this.duration.clone(), this.suspend);
  }
  getSuspend() {
    return this.suspend;
  }
  getMessageId() {
    return 'm1';
  }
  getInvisibleDuration() {
    return this.duration;
  }
  setInvisibleDuration(d: FakeDuration) {
    this.duration = d;
    return this;
  }
  setReceiptHandle(h: string) {
    this.handle = h;
    return this;
  }
}
const response = (code: number, handle?: string) => ({
  getStatus: () => ({ getCode: () => code }),
  getReceiptHandle: () => handle ?? '',
});

function fakeConsumer(codes: number[]) {
  const calls: FakeRequest[] = [];
  const consumer = {
    async changeInvisibleDurationViaRpc(_endpoints: unknown, request: FakeRequest) {
      calls.push(request);
      return response(codes.shift() ?? 20_000, `handle-${calls.length + 1}`);
    },
  };
  return { consumer, calls };
}

describe('observeSuspends', () => {
  it("hands out a recall for an accepted Suspend that resends it on the proxy's new handle with the short duration", async () => {
    const { consumer, calls } = fakeConsumer([]);
    const recalls: Array<(ms: number) => Promise<boolean>> = [];
    const asked: Array<number | undefined> = [];
    expect(
      observeSuspends(consumer, (id, recall, ms) => (expect(id).toBe('m1'), recalls.push(recall), asked.push(ms))),
    ).toBe(true);
    await consumer.changeInvisibleDurationViaRpc({}, new FakeRequest('handle-1', new FakeDuration(30, 500_000_000)));
    expect(asked).toEqual([30_500]);
    expect(recalls).toHaveLength(1);
    expect(await recalls[0]!(1_250)).toBe(true);
    expect(calls[1]).toMatchObject({ handle: 'handle-2', duration: { seconds: 1, nanos: 250_000_000 }, suspend: true });
    // The Suspend itself is unchanged.
    expect(calls[0]).toMatchObject({ handle: 'handle-1', duration: { seconds: 30, nanos: 500_000_000 } });
  });

  it('hands out nothing for a refused Suspend or a plain invisible-time change, and a refused recall says false', async () => {
    const { consumer } = fakeConsumer([40_013, 20_000, 20_000, 40_013]);
    const recalls: Array<(ms: number) => Promise<boolean>> = [];
    observeSuspends(consumer, (_id, recall) => recalls.push(recall));
    await consumer.changeInvisibleDurationViaRpc({}, new FakeRequest('h', new FakeDuration(30)));
    await consumer.changeInvisibleDurationViaRpc({}, new FakeRequest('h', new FakeDuration(30), false));
    expect(recalls).toHaveLength(0);
    await consumer.changeInvisibleDurationViaRpc({}, new FakeRequest('h', new FakeDuration(30)));
    expect(await recalls[0]!(50)).toBe(false);
  });

  it('leaves a client without the method alone', () => {
    expect(observeSuspends({}, () => undefined)).toBe(false);
  });
});

describe('PendingRecalls', () => {
  it('gives the recall to whoever asked, once the Suspend is in place, and voids it once the message is back', async () => {
    const pending = new PendingRecalls();
    let resumed = 0;
    const got: Array<() => Promise<boolean>> = [];
    pending.expect('m1', (recall) => got.push(recall));
    // A sibling the client paused with it: nobody asked.
    pending.applied('m2', async () => true);
    pending.applied('m1', async () => (resumed++, true));
    expect(got).toHaveLength(1);
    expect(await got[0]!()).toBe(true);
    expect(await got[0]!(), 'used once').toBe(false);
    pending.expect('m1', (recall) => got.push(recall));
    pending.applied('m1', async () => (resumed++, true));
    pending.forget('m1');
    expect(await got[1]!(), 'the message came back on its own').toBe(false);
    expect(resumed).toBe(1);
  });

  it('keeps at most its bound, dropping the oldest', () => {
    const pending = new PendingRecalls(2);
    const got: string[] = [];
    for (const id of ['a', 'b', 'c']) pending.expect(id, () => got.push(id));
    for (const id of ['a', 'b', 'c']) pending.applied(id, async () => true);
    expect(got).toEqual(['b', 'c']);
  });
});
