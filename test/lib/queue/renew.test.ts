import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import {
  endRenewalsOnSettle,
  INVISIBLE_MS,
  InHandRenewal,
  invisibleRenewer,
  RENEW_EVERY_MS,
} from '../../../lib/queue/rocketmq/renew.js';

function renewal(maxInHandMs = 100_000) {
  const clock = new VirtualClock(0);
  const renewed: Array<[string, number]> = [];
  const r = new InHandRenewal({ clock, everyMs: 20_000, maxInHandMs });
  const renew = (id: string) => async () => {
    renewed.push([id, clock.now()]);
  };
  return { clock, renewed, r, renew };
}

describe('InHandRenewal', () => {
  it('renews a held message every period until it is settled', async () => {
    const { clock, renewed, r, renew } = renewal();
    r.received('a', renew('a'));
    await clock.advance(19_999);
    expect(renewed).toEqual([]);
    await clock.advance(40_000);
    expect(renewed.map(([id]) => id)).toEqual(['a', 'a']);
    // Within a quarter period of each due time, and never later than one invisible time after the last.
    for (const [, at] of renewed) expect(at % 20_000).toBeLessThanOrEqual(5_000);
    await r.settled('a');
    await clock.advance(100_000);
    expect(renewed).toHaveLength(2);
    expect(r.size).toBe(0);
  });

  it('stops renewing once a message has been in hand its longest', async () => {
    const { clock, renewed, r, renew } = renewal(50_000);
    r.received('a', renew('a'));
    await clock.advance(200_000);
    expect(renewed.map(([, at]) => at).every((at) => at < 50_000)).toBe(true);
    expect(renewed).toHaveLength(2);
    expect(r.size).toBe(0);
  });

  it('a delivery again starts the message over', async () => {
    const { clock, renewed, r, renew } = renewal();
    r.received('a', renew('a'));
    await clock.advance(15_000);
    r.received('a', renew('a'));
    await clock.advance(19_000);
    expect(renewed).toEqual([]);
  });

  it('a settle waits for the renewal on its way, so the ack reaches the broker after it', async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    let answer: (() => void) | undefined;
    r.received('a', () => new Promise<void>((resolve) => (answer = resolve)));
    await clock.advance(25_000);
    expect(answer).toBeDefined();
    let settled = false;
    const settling = r.settled('a').then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    answer!();
    await settling;
    expect(settled).toBe(true);
  });

  it('renews on the handle the last renewal got, settles with it, and forgets it once the message is delivered again', async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    const given: Array<string | undefined> = [];
    let n = 0;
    const renew = async (handle: string | undefined) => {
      given.push(handle);
      return `h${++n}`;
    };
    r.received('a', renew);
    await clock.advance(45_000);
    expect(given).toEqual([undefined, 'h1']);
    expect(await r.settled('a')).toBe('h2');
    expect(await r.settled('a'), 'a settle the client sends again').toBe('h2');
    r.received('a', renew);
    expect(await r.settled('a'), 'a new delivery has a new handle').toBeUndefined();
  });

  it('a failed renewal is tried again next period', async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    let calls = 0;
    r.received('a', async () => {
      calls++;
      throw new Error('proxy unavailable');
    });
    await clock.advance(45_000);
    expect(calls).toBe(2);
  });

  it('renews inside the broker invisible time, twice', () => {
    expect(RENEW_EVERY_MS * 1.25 * 2).toBeLessThanOrEqual(INVISIBLE_MS);
  });
});

describe('invisibleRenewer', () => {
  it("sends the client-built Suspend request with suspend off, through the consumer RPC, on the newest handle, and gives the proxy's new one", async () => {
    const calls: unknown[][] = [];
    const request = {
      suspend: true,
      handle: 'received',
      setSuspend(s: boolean) {
        this.suspend = s;
        return this;
      },
      setReceiptHandle(h: string) {
        this.handle = h;
        return this;
      },
    };
    let answer = 20_000;
    const consumer = {
      requestTimeoutValue: 3_000,
      wrapChangeInvisibleDurationRequest: (view: unknown, ms: number) => {
        calls.push(['wrap', view, ms]);
        return request;
      },
      changeInvisibleDurationViaRpc: async (endpoints: unknown, req: unknown, timeout: number) => {
        calls.push(['rpc', endpoints, req, timeout]);
        return { getStatus: () => ({ toObject: () => ({ code: answer }) }), getReceiptHandle: () => 'renewed' };
      },
    };
    const renew = invisibleRenewer(consumer)!;
    const view = { endpoints: 'proxy:8081' };
    expect(await renew(view)).toBe('renewed');
    expect(calls).toEqual([
      ['wrap', view, INVISIBLE_MS],
      ['rpc', 'proxy:8081', request, 3_000],
    ]);
    expect(request.suspend).toBe(false);
    expect(request.handle).toBe('received');
    expect(await renew(view, 'renewed')).toBe('renewed');
    expect(request.handle).toBe('renewed');
    answer = 40_013;
    expect(await renew(view, 'renewed'), 'refused: no new handle').toBeUndefined();
  });

  it('is undefined for a client without those methods', () => {
    expect(invisibleRenewer({})).toBeUndefined();
  });
});

/** The settle RPCs of client 1.0.8's push consumer, recording what reaches the proxy. */
function settlingConsumer() {
  const sent: string[] = [];
  const rpc = (call: string) => async (_endpoints: unknown, request: { id: string }) => {
    sent.push(`${call} ${request.id}`);
    return 'ok';
  };
  return {
    sent,
    consumer: {
      ackMessageViaRpc: rpc('ack'),
      forwardMessageToDeadLetterQueueViaRpc: rpc('dlq'),
      changeInvisibleDurationViaRpc: rpc('change'),
    },
  };
}
const ack = (id: string) => ({ id, getEntriesList: () => [{ getMessageId: () => id }] });
const change = (id: string, suspend: boolean) => ({ id, getMessageId: () => id, getSuspend: () => suspend });

describe('endRenewalsOnSettle', () => {
  it("stops a message's renewals on whatever settles it, a Suspend the client sends on its own too, but not on a renewal", async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    const { consumer, sent } = settlingConsumer();
    expect(endRenewalsOnSettle(consumer, (id) => r.settled(id))).toBe(true);
    const renewals: string[] = [];
    for (const id of ['acked', 'suspended', 'dead', 'renewed'])
      r.received(id, async () => {
        renewals.push(id);
      });
    await consumer.ackMessageViaRpc('proxy', ack('acked'));
    // The lite FIFO service suspends the messages behind a suspended one straight through this RPC.
    await consumer.changeInvisibleDurationViaRpc('proxy', change('suspended', true));
    await consumer.forwardMessageToDeadLetterQueueViaRpc('proxy', change('dead', true));
    await consumer.changeInvisibleDurationViaRpc('proxy', change('renewed', false));
    expect(sent).toEqual(['ack acked', 'change suspended', 'dlq dead', 'change renewed']);
    await clock.advance(45_000);
    expect(renewals).toEqual(['renewed', 'renewed']);
    expect(r.size).toBe(1);
  });

  it('sends the settle only after the renewal on its way is answered', async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    const { consumer, sent } = settlingConsumer();
    endRenewalsOnSettle(consumer, (id) => r.settled(id));
    let answer: (() => void) | undefined;
    r.received('a', () => new Promise<void>((resolve) => (answer = resolve)));
    await clock.advance(25_000);
    const suspending = consumer.changeInvisibleDurationViaRpc('proxy', change('a', true));
    await Promise.resolve();
    expect(sent).toEqual([]);
    answer!();
    await suspending;
    expect(sent).toEqual(['change a']);
  });

  it("sends the settle with the handle of the message's last renewal, not the expired one it was received with", async () => {
    const clock = new VirtualClock(0);
    const r = new InHandRenewal({ clock, everyMs: 20_000 });
    const entry = {
      handle: 'received',
      getMessageId: () => 'a',
      setReceiptHandle(h: string) {
        this.handle = h;
      },
    };
    const sent: string[] = [];
    const consumer = {
      ...settlingConsumer().consumer,
      ackMessageViaRpc: async (_endpoints: unknown, _request: unknown) => {
        sent.push(entry.handle);
        return 'ok';
      },
    };
    endRenewalsOnSettle(consumer, (id) => r.settled(id));
    r.received('a', async () => 'renewed');
    await clock.advance(25_000);
    await consumer.ackMessageViaRpc('proxy', { getEntriesList: () => [entry] });
    expect(sent).toEqual(['renewed']);
  });

  it('says false for a client without the settle calls', () => {
    expect(endRenewalsOnSettle({ ackMessageViaRpc: async () => 'ok' }, async () => undefined)).toBe(false);
  });
});
