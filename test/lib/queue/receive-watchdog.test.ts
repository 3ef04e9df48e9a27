import { describe, expect, it } from 'vitest';
import { isLostSession, observeReceives, ReceiveWatchdog } from '../../../lib/queue/rocketmq/receive-watchdog.js';

// The proxy's answer once it has dropped a client's settings (rocketmq 5.5 proxy).
const lostSession = new Error(
  '[request-id=undefined, response-code=50001] Cannot invoke "apache.rocketmq.v2.Settings.getClientType()" because "settings" is null. NullPointerException.',
);
const brokerDown = new Error('[request-id=undefined, response-code=40402] No topic route info in name server');

describe('ReceiveWatchdog', () => {
  it('replaces after the failure count once every failure says the session was lost', () => {
    const w = new ReceiveWatchdog({ failures: 3, periodMs: 60_000 });
    expect(w.failed(lostSession, 0)).toBe(false);
    expect(w.failed(lostSession, 1_000)).toBe(false);
    expect(w.failed(lostSession, 2_000)).toBe(true);
  });

  it('waits out the period for other failures (a broker restart the client rides out)', () => {
    const w = new ReceiveWatchdog({ failures: 3, periodMs: 60_000 });
    for (let t = 0; t < 60_000; t += 5_000) expect(w.failed(brokerDown, t)).toBe(false);
    expect(w.failed(brokerDown, 60_000)).toBe(true);
  });

  it('lost-session answers right after the outage failures replace without the period', () => {
    const w = new ReceiveWatchdog({ failures: 2, periodMs: 3_600_000 });
    for (let t = 0; t < 90_000; t += 1_000) expect(w.failed(brokerDown, t)).toBe(false);
    expect(w.failed(lostSession, 91_000)).toBe(false);
    expect(w.failed(brokerDown, 92_000)).toBe(false);
    expect(w.failed(lostSession, 93_000)).toBe(false);
    expect(w.failed(lostSession, 94_000)).toBe(true);
  });

  it('a successful receive ends the streak', () => {
    const w = new ReceiveWatchdog({ failures: 2, periodMs: 10_000 });
    w.failed(lostSession, 0);
    w.succeeded();
    expect(w.failed(lostSession, 1_000)).toBe(false);
    expect(w.failures).toBe(1);
    w.succeeded();
    expect(w.failed(brokerDown, 20_000)).toBe(false);
    expect(w.failed(brokerDown, 25_000)).toBe(false);
    expect(w.failed(brokerDown, 30_000)).toBe(true);
  });

  it('recognizes the lost-session answers', () => {
    expect(isLostSession(lostSession)).toBe(true);
    expect(isLostSession(new Error('cannot find client settings for this client'))).toBe(true);
    expect(isLostSession(brokerDown)).toBe(false);
  });
});

describe('observeReceives', () => {
  it('reports each receive of the client and passes its result on unchanged', async () => {
    let fail = false;
    const consumer = {
      calls: 0,
      async receiveMessage(n: number) {
        this.calls++;
        if (fail) throw lostSession;
        return [n];
      },
    };
    const seen: string[] = [];
    expect(
      observeReceives(consumer, {
        ok: (m) => seen.push(`ok ${m.length}`),
        failed: (e) => seen.push(String(isLostSession(e))),
      }),
    ).toBe(true);
    expect(await consumer.receiveMessage(7)).toEqual([7]);
    fail = true;
    await expect(consumer.receiveMessage(8)).rejects.toBe(lostSession);
    expect(seen).toEqual(['ok 1', 'true']);
    expect(consumer.calls).toBe(2);
  });

  it('says so when the client has nothing to observe', () => {
    expect(observeReceives({}, { ok: () => undefined, failed: () => undefined })).toBe(false);
  });
});
