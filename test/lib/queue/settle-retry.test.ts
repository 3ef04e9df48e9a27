import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { retryRefusedSettles, type SettleRefusal } from '../../../lib/queue/rocketmq/settle-retry.js';

// apache.rocketmq.v2.Code
const OK = 20_000;
const INVALID_RECEIPT_HANDLE = 40_013;
const INTERNAL_SERVER_ERROR = 50_001;

/** Shaped like the client's protobuf objects: getters, and toObject on a status. */
const status = (code: number, message = '') => ({ getStatus: () => ({ toObject: () => ({ code, message }) }) });
const ackRequest = (messageId: string) => ({ getEntriesList: () => [{ getMessageId: () => messageId }] });
const changeRequest = (messageId: string) => ({ getMessageId: () => messageId });

/** Shaped like rocketmq-client-nodejs 1.0.8's consumer: the RPC methods its process queues call. */
class FakeConsumer {
  readonly calls: number[] = [];
  constructor(
    private readonly clock: VirtualClock,
    private readonly responses: Array<() => unknown>,
  ) {}
  private answer(): unknown {
    this.calls.push(this.clock.now());
    const next = this.responses.length > 1 ? this.responses.shift()! : this.responses[0]!;
    return next();
  }
  async ackMessageViaRpc(_endpoints: unknown, _request: unknown, _timeout: number): Promise<unknown> {
    return this.answer();
  }
  async changeInvisibleDurationViaRpc(_endpoints: unknown, _request: unknown, _timeout: number): Promise<unknown> {
    return this.answer();
  }
}

function wrapped(...responses: Array<() => unknown>) {
  const clock = new VirtualClock(0);
  const consumer = new FakeConsumer(clock, responses);
  const refusals: SettleRefusal[] = [];
  const ok = retryRefusedSettles(consumer, { clock, retryMs: 1_000, retries: 3, report: (r) => refusals.push(r) });
  return { clock, consumer, refusals, ok };
}

/** Runs `call` to completion on the virtual clock. */
async function settle<T>(clock: VirtualClock, call: Promise<T>): Promise<T> {
  let done = false;
  const result = call.finally(() => {
    done = true;
  });
  result.catch(() => undefined); // the caller awaits it once the clock has run
  for (let i = 0; i < 20 && !done; i++) await clock.advance(1_000);
  return result;
}

describe('retryRefusedSettles', () => {
  it('passes an ack the proxy takes straight through, once, without a report', async () => {
    const response = status(OK);
    const { clock, consumer, refusals, ok } = wrapped(() => response);
    expect(ok).toBe(true);
    await expect(settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m1'), 3_000))).resolves.toBe(
      response,
    );
    expect(consumer.calls).toEqual([0]);
    expect(refusals).toEqual([]);
  });

  it('acks again a second later when the proxy cannot find the broker yet, and hands the client the success', async () => {
    const { clock, consumer, refusals } = wrapped(
      () => status(INVALID_RECEIPT_HANDLE, 'cannot find broker broker-a'),
      () => status(OK),
    );
    const response = await settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m1'), 3_000));
    expect((response as ReturnType<typeof status>).getStatus().toObject().code).toBe(OK);
    expect(consumer.calls).toEqual([0, 1_000]);
    expect(refusals).toEqual([
      {
        call: 'ack',
        messageId: 'm1',
        code: INVALID_RECEIPT_HANDLE,
        reason: 'cannot find broker broker-a',
        attempt: 1,
        retrying: true,
      },
    ]);
  });

  it('gives up after its retries on a handle that really expired, leaving the rest to the client', async () => {
    const { clock, consumer, refusals } = wrapped(() => status(INVALID_RECEIPT_HANDLE, 'receipt handle is expired'));
    const response = await settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m2'), 3_000));
    expect((response as ReturnType<typeof status>).getStatus().toObject().code).toBe(INVALID_RECEIPT_HANDLE);
    expect(consumer.calls).toEqual([0, 1_000, 2_000, 3_000]);
    expect(refusals.map((r) => [r.attempt, r.retrying])).toEqual([
      [1, true],
      [2, true],
      [3, true],
      [4, false],
    ]);
  });

  it('tries a refused Suspend again the same way', async () => {
    const { clock, consumer, refusals } = wrapped(
      () => status(INVALID_RECEIPT_HANDLE),
      () => status(OK),
    );
    await settle(clock, consumer.changeInvisibleDurationViaRpc('endpoints', changeRequest('m3'), 3_000));
    expect(consumer.calls).toEqual([0, 1_000]);
    expect(refusals).toEqual([
      {
        call: 'change-invisible-duration',
        messageId: 'm3',
        code: INVALID_RECEIPT_HANDLE,
        reason: '',
        attempt: 1,
        retrying: true,
      },
    ]);
  });

  it('reports other refusals once and leaves their retries to the client, which makes its own', async () => {
    const { clock, consumer, refusals } = wrapped(() => status(INTERNAL_SERVER_ERROR, 'broker down'));
    await settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m4'), 3_000));
    expect(consumer.calls).toEqual([0]);
    expect(refusals).toEqual([
      { call: 'ack', messageId: 'm4', code: INTERNAL_SERVER_ERROR, reason: 'broker down', attempt: 1, retrying: false },
    ]);
  });

  it('looks at each entry when the response as a whole says OK', async () => {
    const refusedEntry = {
      ...status(OK),
      getEntriesList: () => [status(INVALID_RECEIPT_HANDLE, 'cannot find broker broker-a')],
    };
    const { clock, consumer, refusals } = wrapped(
      () => refusedEntry,
      () => status(OK),
    );
    await settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m5'), 3_000));
    expect(consumer.calls).toEqual([0, 1_000]);
    expect(refusals).toHaveLength(1);
  });

  it('reports a call that throws and rethrows it to the client', async () => {
    const { clock, consumer, refusals } = wrapped(() => {
      throw new Error('DEADLINE_EXCEEDED');
    });
    await expect(settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m6'), 3_000))).rejects.toThrow(
      'DEADLINE_EXCEEDED',
    );
    expect(refusals).toEqual([
      { call: 'ack', messageId: 'm6', code: undefined, reason: 'DEADLINE_EXCEEDED', attempt: 1, retrying: false },
    ]);
  });

  it('never lets a failing report change what the client sees', async () => {
    const clock = new VirtualClock(0);
    const consumer = new FakeConsumer(clock, [() => status(INTERNAL_SERVER_ERROR)]);
    retryRefusedSettles(consumer, {
      clock,
      report: () => {
        throw new Error('logger down');
      },
    });
    await expect(settle(clock, consumer.ackMessageViaRpc('endpoints', ackRequest('m7'), 3_000))).resolves.toBeDefined();
  });

  it('is false on a client without the methods, so the caller can say it runs without', () => {
    expect(retryRefusedSettles({}, { clock: new VirtualClock(0), report: () => undefined })).toBe(false);
  });
});
