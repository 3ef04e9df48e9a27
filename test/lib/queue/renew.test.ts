import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { INVISIBLE_MS, InHandRenewal, invisibleRenewer, RENEW_EVERY_MS } from '../../../lib/queue/rocketmq/renew.js';

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
  it('sends the client-built Suspend request with suspend off, through the consumer RPC', async () => {
    const calls: unknown[][] = [];
    const request = {
      suspend: true,
      setSuspend(s: boolean) {
        this.suspend = s;
        return this;
      },
    };
    const consumer = {
      requestTimeoutValue: 3_000,
      wrapChangeInvisibleDurationRequest: (view: unknown, ms: number) => {
        calls.push(['wrap', view, ms]);
        return request;
      },
      changeInvisibleDurationViaRpc: async (endpoints: unknown, req: unknown, timeout: number) => {
        calls.push(['rpc', endpoints, req, timeout]);
        return 'ok';
      },
    };
    const renew = invisibleRenewer(consumer)!;
    const view = { endpoints: 'proxy:8081' };
    expect(await renew(view)).toBe('ok');
    expect(calls).toEqual([
      ['wrap', view, INVISIBLE_MS],
      ['rpc', 'proxy:8081', request, 3_000],
    ]);
    expect(request.suspend).toBe(false);
  });

  it('is undefined for a client without those methods', () => {
    expect(invisibleRenewer({})).toBeUndefined();
  });
});
