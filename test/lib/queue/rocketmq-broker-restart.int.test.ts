import { expect, it } from 'vitest';
import { Consume } from '../../../lib/queue/types.js';
import { pause, sendOnceBack, until, useRocketMQ } from '../../support/rocketmq.ts';

// A restarted broker holds no lite subscriptions: it hands a wildcard consumer nothing
// until the client syncs its subscription again, which rocketmq-client-nodejs does
// every 30 s from the consumer's start. The adapter syncs as soon as receives work again
// (lib/queue/rocketmq/lite-subscription.ts). Here the broker is killed a second after the
// consumers start and back well before their first 30 s sync. Measured from the first
// send the restarted broker took to its delivery: 26.3 s without the adapter's sync (the
// tick), 9.4 and 10.2 s with it (the proxy relearning the group, then the broker's
// wildcard scan after the sync).
// Kills the broker: the integration project runs files one at a time.
const { control, freshQueue } = useRocketMQ();

it('delivers what is sent after a broker restart within seconds, not at the client 30 s re-sync', async () => {
  const queue = await freshQueue('restart', { orderly: true, maxAttempts: 16 }, { sendTimeoutMs: 3_000 });
  const got = new Map<string, number>();
  queue.subscribe(async (m) => {
    got.set(m.body, Date.now());
    return Consume.success;
  }, { concurrency: 4 });
  await queue.ready();
  await queue.send('lt-a', 'before');
  await until('the message sent before the restart', () => got.has('before'));

  await control.killBroker();
  await pause(3_000);
  await control.restartBroker();

  await sendOnceBack(queue, 'lt-a', 'after', 60_000, 500);
  const sentAt = Date.now();
  await until('the message sent after the restart', () => got.has('after'), 60_000);
  const waitedMs = got.get('after')! - sentAt;
  console.log('delivered after the restart in', waitedMs, 'ms');
  expect(waitedMs).toBeLessThan(15_000);
}, 300_000);
