import { describe, expect, it } from 'vitest';
import { Consume } from '../../../lib/queue/types.js';
import { useRocketMQ } from '../../support/rocketmq.ts';

// Closed loop over many LiteTopics, as 32 tenants with one client each: each LiteTopic
// gets its next message only once the last one was handled. On RocketMQ 5.5.0 the
// broker can drop a LiteTopic's "has messages" event when an ack re-dispatches it while
// a pop is assembling (apache/rocketmq#11191); a closed loop then sends nothing more to
// wake it, and the LiteTopic stalls.
const { freshQueue } = useRocketMQ();

const LITE_TOPICS = 32;
const ROUNDS = 30;

async function closedLoop(extra: Parameters<typeof freshQueue>[2]) {
  const queue = await freshQueue('stall', { orderly: true, maxAttempts: 16 }, extra);
  const sentAt = new Map<string, number>();
  const waits: number[] = [];
  const done = new Map<string, number>();
  const send = async (lt: string, round: number) => {
    const body = `${lt}:${round}`;
    sentAt.set(body, Date.now());
    await queue.send(lt, body);
  };
  queue.subscribe(
    async (m) => {
      // A fresh wildcard consumer's first delivery takes about a second either way: not counted.
      if (!m.body.endsWith(':0')) waits.push(Date.now() - (sentAt.get(m.body) ?? Date.now()));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 60));
      const [lt, round] = [m.liteTopic, Number(m.body.split(':')[1])];
      done.set(lt, round + 1);
      // The next request of this "client" goes out once the answer is back (not awaited: the handler returns first).
      if (round + 1 < ROUNDS) setTimeout(() => void send(lt, round + 1), 5);
      return Consume.success;
    },
    { concurrency: 64 },
  );
  await queue.ready();
  const topics = Array.from({ length: LITE_TOPICS }, (_, i) => `stall-t${i}`);
  const t0 = Date.now();
  await Promise.all(topics.map((lt) => send(lt, 0)));
  const deadline = t0 + 60_000;
  while (Date.now() < deadline && [...done.values()].reduce((a, b) => a + b, 0) < LITE_TOPICS * ROUNDS)
    await new Promise((r) => setTimeout(r, 50));
  waits.sort((a, b) => a - b);
  return {
    handled: waits.length,
    seconds: (Date.now() - t0) / 1000,
    p50: waits[Math.floor(waits.length * 0.5)] ?? -1,
    p99: waits[Math.floor(waits.length * 0.99)] ?? -1,
    max: waits.at(-1) ?? -1,
    over1s: waits.filter((w) => w > 1_000).length,
  };
}

describe('closed loop over 32 LiteTopics', () => {
  it('delivers every message, none held for seconds', async () => {
    const r = await closedLoop({});
    console.log('closed loop, nudged', JSON.stringify(r));
    expect(r.handled).toBe(LITE_TOPICS * (ROUNDS - 1));
    // Nudged after 500 ms of silence: a forgotten LiteTopic waits about that long plus a
    // delivery, not for ever (unnudged, 2 of 4 runs here left 9 and 93 messages undelivered).
    expect(r.max).toBeLessThan(5_000);
  }, 120_000);
});
