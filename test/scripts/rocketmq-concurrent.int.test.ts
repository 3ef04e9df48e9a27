import { ConsumeResult, ConsumeResultSuspend, type MessageView } from 'rocketmq-client-nodejs';
import { describe, expect, it } from 'vitest';
import { PROXY_CONSUMER_SETTINGS } from '../../infra/rocketmq/proxy-conf.js';
import { pause, until, useRocketMQ } from '../support/rocketmq.ts';

const RECEIVE_BATCH = PROXY_CONSUMER_SETTINGS.grpcClientConsumerLongPollingBatchSize;

// A non-orderly wildcard LiteTopic group (consumeMessageOrderly=false, `-o false`) on
// the local RocketMQ, straight through rocketmq-client-nodejs 1.0.8: what it does with
// several messages of one LiteTopic, and what Suspend does there. The broker's lite pop
// (PopLiteMessageProcessor) is FIFO per LiteTopic whatever the group says: a LiteTopic
// hands out one batch at a time, and the client of a non-orderly group runs that batch
// at once.
const { mq, producer, consumer, send, freshTopicAndGroup: freshOn } = useRocketMQ();
const freshTopicAndGroup = (orderly: boolean, maxAttempts = 16) => freshOn('conc', { maxAttempts, orderly });

interface Delivery {
  body: string;
  at: number;
  /** How many handlers of the LiteTopic were already running when this one started. */
  running: number;
}

/** Handles every message of one LiteTopic in `handleMs`, recording starts and overlap. */
function recorder(handleMs: number) {
  const deliveries: Delivery[] = [];
  let running = 0;
  let maxRunning = 0;
  const consume = async (m: MessageView) => {
    deliveries.push({ body: m.body.toString(), at: Date.now(), running });
    running++;
    maxRunning = Math.max(maxRunning, running);
    await pause(handleMs);
    running--;
    return ConsumeResult.SUCCESS;
  };
  return { deliveries, consume, maxRunning: () => maxRunning };
}

describe(`RocketMQ ${mq.version} non-orderly wildcard LiteTopic group`, () => {
  it('handles several messages of one LiteTopic at once, one received batch at a time (FIFO group: one)', async () => {
    const n = 40;
    const concurrent = await freshTopicAndGroup(false);
    const fifo = await freshTopicAndGroup(true);
    const pc = await producer(concurrent.topic);
    const pf = await producer(fifo.topic);
    // Queued before the consumers start, so the first receive finds a full batch.
    for (let i = 0; i < n; i++) {
      await send(pc, concurrent.topic, 'one', String(i));
      await send(pf, fifo.topic, 'one', String(i));
    }
    const c = recorder(300);
    const f = recorder(300);
    await consumer(concurrent.topic, concurrent.group, c.consume);
    await consumer(fifo.topic, fifo.group, f.consume);
    await until('every message in both groups', () => c.deliveries.length >= n && f.deliveries.length >= n, 90_000);
    await pause(1_000);

    expect(f.maxRunning(), 'FIFO group: one message of the LiteTopic at a time').toBe(1);
    // Observed at the proxy's default receive batch of 32: the 40 queued messages came
    // as one batch of 32 and then 8, so 32 ran at once. Sluice's proxies use a smaller one.
    expect(c.maxRunning(), 'non-orderly group: several at once').toBeGreaterThanOrEqual(2);
    expect(c.maxRunning()).toBeLessThanOrEqual(RECEIVE_BATCH);
    // Each message once, in either group.
    expect(new Set(c.deliveries.map((d) => d.body)).size).toBe(n);
    expect(c.deliveries).toHaveLength(n);
    expect(f.deliveries.map((d) => d.body)).toEqual(Array.from({ length: n }, (_, i) => String(i)));
    // Waves: a message starts either with nothing of the LiteTopic running (a new batch)
    // or together with the batch it came in; never while an earlier batch still runs.
    let waveStart = 0;
    for (const d of c.deliveries) {
      if (d.running === 0) waveStart = d.at;
      else expect(d.at - waveStart, `message ${d.body} started during an earlier batch`).toBeLessThan(150);
    }
    expect(c.deliveries.filter((d) => d.running === 0).length, 'at least two batches').toBeGreaterThanOrEqual(2);
  });

  it('Suspend of one message pauses its whole LiteTopic and redelivers the batch from that message on, acked ones included', async () => {
    // Long enough that a loaded CI machine, slow to first deliver a new LiteTopic (1.56 s
    // once), still shows the healthy one served inside the pause.
    const PAUSE_MS = 4_000;
    const { topic, group } = await freshTopicAndGroup(false);
    const p = await producer(topic);
    for (let i = 0; i < 5; i++) await send(p, topic, 'paused', `p${i}`);
    const events: Array<{ body: string; at: number; attempt: number }> = [];
    let suspendedAt = 0;
    await consumer(topic, group, async (m) => {
      const body = m.body.toString();
      events.push({ body, at: Date.now(), attempt: m.deliveryAttempt ?? 0 });
      if (body === 'p1' && suspendedAt === 0) {
        suspendedAt = Date.now();
        return ConsumeResultSuspend.of(PAUSE_MS);
      }
      await pause(50);
      return ConsumeResult.SUCCESS;
    });
    await until('the Suspend of p1', () => suspendedAt > 0);
    await pause(300);
    await send(p, topic, 'paused', 'p-late');
    await send(p, topic, 'healthy', 'h0');
    await until('p-late', () => events.some((e) => e.body === 'p-late'), 30_000);
    await pause(1_000);

    const at = (body: string, nth = 0) => events.filter((e) => e.body === body)[nth]!.at - suspendedAt;
    expect(at('h0'), 'another LiteTopic is served during the pause').toBeLessThan(PAUSE_MS - 100);
    expect(at('h0'), 'before the paused one comes back').toBeLessThan(at('p1', 1));
    expect(at('p-late'), 'a later message of the paused LiteTopic waits for the pause').toBeGreaterThanOrEqual(
      PAUSE_MS - 100,
    );
    expect(at('p1', 1), 'the suspended message comes back after the pause').toBeGreaterThanOrEqual(PAUSE_MS - 100);
    // p0 was acked before p1's offset and stays done; the rest of p1's received batch
    // (p0..p{RECEIVE_BATCH-1}) was handled and acked during the pause and is delivered
    // again with p1; messages of the next batch come once, after the pause.
    const count = (body: string) => events.filter((e) => e.body === body).length;
    const expected = [0, 1, 2, 3, 4].map((i) => (i > 0 && i < RECEIVE_BATCH ? 2 : 1));
    expect(['p0', 'p1', 'p2', 'p3', 'p4', 'p-late'].map(count)).toEqual([...expected, 1]);
    expect(events.filter((e) => e.body !== 'h0' && e.at - suspendedAt >= PAUSE_MS - 100).map((e) => e.body)).toEqual([
      'p1',
      'p2',
      'p3',
      'p4',
      'p-late',
    ]);
  });

  it("a message still being handled when a sibling's Suspend ends is delivered again at the same time", async () => {
    const { topic, group } = await freshTopicAndGroup(false);
    const p = await producer(topic);
    for (let i = 0; i < 4; i++) await send(p, topic, 'lt', `m${i}`);
    const runs: Array<{ body: string; start: number; end?: number }> = [];
    await consumer(topic, group, async (m) => {
      const body = m.body.toString();
      const run: { body: string; start: number; end?: number } = { body, start: Date.now() };
      const first = !runs.some((r) => r.body === body);
      runs.push(run);
      if (body === 'm0' && first) return ConsumeResultSuspend.of(500);
      if (body === 'm2') await pause(3_000);
      run.end = Date.now();
      return ConsumeResult.SUCCESS;
    });
    await until(
      'm2 handled twice',
      () => runs.filter((r) => r.body === 'm2' && r.end !== undefined).length >= 2,
      30_000,
    );
    const [a, b] = runs.filter((r) => r.body === 'm2');
    // Observed: the second delivery of m2 came ~0.6 s after the first, which ran 3 s.
    expect(b!.start, 'the second run starts before the first has finished').toBeLessThan(a!.end!);
    expect(runs.filter((r) => r.body === 'm0')).toHaveLength(2);
  });

  it('the last Suspend returned for a batch sets the pause of the whole LiteTopic', async () => {
    const { topic, group } = await freshTopicAndGroup(false);
    const p = await producer(topic);
    for (let i = 0; i < 4; i++) await send(p, topic, 'lt', `m${i}`);
    const events: Array<{ body: string; at: number }> = [];
    let firstAt = 0;
    await consumer(topic, group, async (m) => {
      const body = m.body.toString();
      const nth = events.filter((e) => e.body === body).length;
      if (firstAt === 0) firstAt = Date.now();
      events.push({ body, at: Date.now() });
      if (nth === 0 && body === 'm1') return ConsumeResultSuspend.of(4_000);
      if (nth === 0 && body === 'm2') {
        await pause(300);
        return ConsumeResultSuspend.of(500);
      }
      return ConsumeResult.SUCCESS;
    });
    await until('m1 again', () => events.filter((e) => e.body === 'm1').length >= 2, 30_000);
    const again = events.filter((e) => e.body === 'm1')[1]!.at - firstAt;
    // m1 asked for 4 s; m2's 500 ms Suspend, returned 300 ms later, replaced it.
    // Observed: m1 back after ~0.8 s.
    expect(again).toBeGreaterThanOrEqual(700);
    expect(again).toBeLessThan(2_500);
  });

  it('a suspended message comes back on every Suspend with attempts to spare; in a group allowing one attempt only once', async () => {
    const run = async (maxAttempts: number) => {
      const { topic, group } = await freshTopicAndGroup(false, maxAttempts);
      const p = await producer(topic);
      const deliveries: Array<{ at: number; attempt: number }> = [];
      await consumer(topic, group, async (m) => {
        deliveries.push({ at: Date.now(), attempt: m.deliveryAttempt ?? 0 });
        return deliveries.length <= 5 ? ConsumeResultSuspend.of(200) : ConsumeResult.SUCCESS;
      });
      await send(p, topic, 'often-paused', 'x');
      return deliveries;
    };
    const [roomy, single] = await Promise.all([run(2), run(1)]);
    await until('the sixth delivery with attempts to spare', () => roomy.length >= 6, 30_000);
    await until('the second delivery in the one-attempt group', () => single.length >= 2, 30_000);
    // Give the one-attempt group's third delivery ample time (a Suspend of 200 ms).
    await pause(8_000);
    expect(
      roomy.map((d) => d.attempt),
      'as in a FIFO group: 2 after the first Suspend, and it stays',
    ).toEqual([1, 2, 2, 2, 2, 2]);
    for (let i = 1; i < roomy.length; i++) expect(roomy[i]!.at - roomy[i - 1]!.at).toBeGreaterThanOrEqual(150);
    // Observed: with retryMaxTimes 0 the message came back once (attempt still 1) and
    // never after its second Suspend. Groups Sluice creates allow 5 or 16.
    expect(single.map((d) => d.attempt)).toEqual([1, 1]);
  });
});
