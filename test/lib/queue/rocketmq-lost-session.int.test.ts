import { expect, it } from 'vitest';
import type { Logger } from '../../../lib/telemetry/log.js';
import { Consume } from '../../../lib/queue/types.js';
import { pause, sendOnceBack, until, useRocketMQ } from '../../support/rocketmq.ts';

// Issue #15: the broker away long enough for the proxy to drop the consumer's settings
// (GrpcClientSettingsManager's cleaner), then back. Every receive of the old client
// then fails with an NPE on `settings` and the client never sends its settings again;
// the adapter must replace the consumer and consume what is sent afterwards.
// Kills the broker: run this file on its own, never beside other broker tests.
const { control, freshQueue } = useRocketMQ();
/**
 * Past the proxy's channel expiry (channelExpiredTimeout, 120 s by default): the
 * consumer's heartbeats fail while the broker is away, its channel is dropped, and the
 * settings cleaner drops its settings next. The chaos bench's 90 s outage plus the
 * restart reached it only sometimes.
 */
const OUTAGE_MS = 140_000;

it('replaces a consumer whose session the proxy dropped during a long broker outage', async () => {
  const lines: Array<{ level: string; text: string }> = [];
  const capture =
    (level: string) =>
    (obj: object, msg?: string): void =>
      void lines.push({ level, text: `${msg ?? ''} ${JSON.stringify(obj)}` });
  const log: Logger = { debug: () => undefined, info: () => undefined, warn: capture('warn'), error: capture('error') };
  // The period is longer than the test: only the proxy's lost-session answer may trigger a replacement.
  const queue = await freshQueue(
    'lost',
    { orderly: true, maxAttempts: 16 },
    {
      log,
      receiveWatchdog: { failures: 3, periodMs: 3_600_000 },
      sendTimeoutMs: 3_000,
    },
  );
  const got = new Set<string>();
  queue.subscribe(
    async (m) => {
      got.add(m.body);
      return Consume.success;
    },
    { concurrency: 4 },
  );
  await queue.ready();
  await queue.send('lt-a', 'before');
  await until('the message sent before the outage', () => got.has('before'));

  await control.killBroker();
  await pause(OUTAGE_MS);
  await control.restartBroker();

  await sendOnceBack(queue, 'lt-a', 'after', 120_000, 1_000);
  // Well within the client's own settings re-sync (every 5 minutes from its start),
  // which would bring the old consumer back eventually.
  await until('the message sent after the outage', () => got.has('after'), 60_000);

  const lostSession = lines.filter(
    (l) => l.text.includes('"settings\\" is null') || l.text.includes('"settings" is null'),
  );
  const replaced = lines.filter((l) => l.text.includes('replacing it with a new client'));
  console.log('lost-session receive errors', lostSession.length, 'replacements', replaced.length);
  expect(lostSession.length, 'the proxy dropped the session (the fault was reproduced)').toBeGreaterThan(0);
  expect(replaced.length).toBeGreaterThan(0);
}, 600_000);
