import { expect, it } from 'vitest';
import { Consume } from '../../../lib/queue/types.js';
import { until, useRocketMQ } from '../../support/rocketmq.ts';

// A Suspend is flow control, not a failure: a message Suspended more times than the
// group's retry count must still be delivered (the proxy dead-letters a message whose
// reconsume count reaches the group's maxAttempts, without delivering it).
const { freshQueue } = useRocketMQ();

it('delivers a message Suspended more times than the group allows retries', async () => {
  const queue = await freshQueue('suspends', { orderly: true, maxAttempts: 3 });
  let deliveries = 0;
  let done = false;
  queue.subscribe(async () => {
    deliveries++;
    if (deliveries <= 8) return Consume.suspend(50);
    done = true;
    return Consume.success;
  }, { concurrency: 4 });
  await queue.ready();
  await queue.send('lt-s', 'x');
  await until(`the ninth delivery (deliveries so far: ${deliveries})`, () => done, 60_000).catch((err) => {
    throw new Error(`${(err as Error).message}; deliveries seen: ${deliveries}`);
  });
  expect(deliveries).toBe(9);
});
