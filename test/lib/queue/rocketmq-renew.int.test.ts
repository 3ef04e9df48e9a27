import { describe, expect, it } from 'vitest';
import { Consume } from '../../../lib/queue/types.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createReceiveProbe } from '../../../lib/queue/rocketmq/receive-probe.js';
import { INVISIBLE_MS, RENEW_EVERY_MS } from '../../../lib/queue/rocketmq/renew.js';
import { until, useRocketMQ } from '../../support/rocketmq.ts';

// The 5.5.0 proxy's own renewal of a held lite message changes nothing (renew.ts): without the
// adapter's, a message held past the broker's invisible time was delivered again, and the
// message behind it in its LiteTopic with it.
const { freshQueue } = useRocketMQ();

describe('RocketMQ adapter keeps held messages invisible', () => {
  it(
    'a message held past two invisible times is delivered once and acked, and the one behind it once, after it',
    async () => {
      // The adapter joins a delivery again of a message in hand to the run in progress, so
      // the handler alone would not see one: the probe counts every message that arrives.
      const probe = createReceiveProbe(() => 'all');
      const refused: string[] = [];
      const log = {
        ...silentLogger,
        warn: (_obj: object, msg?: string) => {
          if (msg?.includes('refused to settle')) refused.push(msg);
        },
      };
      const queue = await freshQueue('renew', { orderly: true, maxAttempts: 16 }, { probe, log });
      // Past the renewal the received handle allows: the proxy refuses a handle past its
      // invisible time, so the ack and later renewals must carry the newest one.
      const holdMs = 2 * INVISIBLE_MS + 10_000;
      const deliveries: string[] = [];
      let done = 0;
      queue.subscribe(
        async (m) => {
          deliveries.push(m.body);
          if (m.body === 'held') await new Promise((resolve) => setTimeout(resolve, holdMs));
          done++;
          return Consume.success;
        },
        { concurrency: 4 },
      );
      await queue.ready();
      await queue.send('renew-held', 'held');
      await queue.send('renew-held', 'behind');
      await until('both handled', () => done === 2, holdMs + 30_000);
      // Time for a delivery again to show up, had the broker made one.
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(deliveries).toEqual(['held', 'behind']);
      // A nudge (nudge.ts) may follow the last ack of the quiet LiteTopic; it never reaches a handler.
      const { whileInHand, afterSettled, messages, nudges } = probe.summary();
      expect({ whileInHand, afterSettled, messages: messages - nudges }).toEqual({
        whileInHand: 0,
        afterSettled: 0,
        messages: 2,
      });
      expect(refused, 'no renewal or ack refused').toEqual([]);
    },
    2 * INVISIBLE_MS + 90_000,
  );

  // Client 1.0.8 suspends the messages behind a suspended one in the same received batch
  // itself, and no handler sees them. Renewed on as if still in hand, they held the
  // LiteTopic shut for another invisible time past the Suspend's end (60-80 s late).
  it(
    "a Suspend longer than a renewal period ends on time with the head's batch-mates behind it",
    async () => {
      const queue = await freshQueue('renew-batch', { orderly: true, maxAttempts: 16 });
      const suspendMs = RENEW_EVERY_MS + 10_000;
      // Sent before the consumer starts, so the broker hands all three over in one batch.
      for (const body of ['head', 'second', 'third']) await queue.send('renew-batch', body);
      const deliveries: Array<{ body: string; at: number }> = [];
      let suspendedAt = 0;
      queue.subscribe(
        async (m) => {
          deliveries.push({ body: m.body, at: Date.now() });
          if (m.body === 'head' && suspendedAt === 0) {
            suspendedAt = Date.now();
            return Consume.suspend(suspendMs);
          }
          return Consume.success;
        },
        { concurrency: 4 },
      );
      await queue.ready();
      await until('all three handled', () => deliveries.some((d) => d.body === 'third'), suspendMs + 90_000);
      expect(deliveries.map((d) => d.body)).toEqual(['head', 'head', 'second', 'third']);
      const lateMs = deliveries[1]!.at - (suspendedAt + suspendMs);
      console.log(`head back ${lateMs} ms after its ${suspendMs} ms Suspend ended`);
      expect(lateMs, "back within a few seconds of the Suspend's end").toBeLessThan(5_000);
    },
    RENEW_EVERY_MS + 130_000,
  );
});
