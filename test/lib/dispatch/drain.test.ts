import { describe, expect, it } from 'vitest';
import { createDrain } from '../../../lib/dispatch/drain.js';
import { EmbeddedLiteQueue } from '../../../lib/queue/embedded.js';
import { Consume, type LiteMessage } from '../../../lib/queue/types.js';
import type { UpstreamCall, UpstreamClient } from '../../../lib/upstream/client.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';

/** An upstream that answers only when told, or fails when its call's signal aborts. */
function heldUpstream() {
  const calls: UpstreamCall[] = [];
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  const answer = (call: UpstreamCall) =>
    new Promise<{ status: number; json: unknown }>((resolve, reject) => {
      calls.push(call);
      call.signal?.addEventListener('abort', () => reject(call.signal!.reason), { once: true });
      void released.then(() => resolve({ status: 200, json: {} }));
    });
  const client: UpstreamClient = {
    call: answer,
    stream: (call) => answer(call),
    metrics: async () => '',
    close: async () => {},
  };
  return { client, calls, release };
}

const call: UpstreamCall = { baseUrl: 'http://gpu/v1', operation: 'completions', body: {}, timeoutMs: 60_000 };

describe('bounded drain', () => {
  it('work that finishes within the drain time is finished and acked', async () => {
    const drain = createDrain({ clock: systemClock, drainMs: 2_000 });
    const upstream = heldUpstream();
    const queue = new EmbeddedLiteQueue({ clock: systemClock });
    await queue.send('t', 'x');
    const sub = queue.subscribe(
      drain.handler(async () =>
        (await drain.upstream(upstream.client).call(call)).status === 200 ? Consume.success : Consume.failure(),
      ),
      { concurrency: 1 },
    );
    while (upstream.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    setTimeout(() => upstream.release(), 100);
    const outcome = await drain.run(() => sub.close());
    expect(outcome.drained).toBe(true);
    expect(queue.stats()).toMatchObject({ queued: 0, inFlight: 0, deadLettered: 0 });
  });

  it('past the drain time, calls are cut and their messages handed back un-acked, attempt not counted', async () => {
    const drain = createDrain({ clock: systemClock, drainMs: 200, graceMs: 1_000, handBackMs: 100 });
    const upstream = heldUpstream();
    const queue = new EmbeddedLiteQueue({ clock: systemClock, maxAttempts: 1 });
    await queue.send('t', 'x');
    const sub = queue.subscribe(
      drain.handler(async () => {
        try {
          await drain.upstream(upstream.client).call(call);
          return Consume.success;
        } catch (error) {
          return Consume.failure(String(error));
        }
      }),
      { concurrency: 1 },
    );
    while (upstream.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
    const outcome = await drain.run(() => sub.close());
    expect(outcome.drained).toBe(false);
    expect(outcome.elapsedMs).toBeGreaterThanOrEqual(200);
    expect(outcome.elapsedMs).toBeLessThan(1_200);
    expect(drain.overdue.aborted).toBe(true);
    // With one attempt allowed, a counted failure would have dead-lettered it.
    expect(queue.stats()).toMatchObject({ queued: 1, inFlight: 0, deadLettered: 0 });
    const redelivered = await new Promise<LiteMessage>((resolve) => {
      const next = queue.subscribe(
        async (m) => {
          resolve(m);
          return Consume.success;
        },
        { concurrency: 1 },
      );
      void next;
    });
    expect(redelivered).toMatchObject({ body: 'x', attempt: 1 });
    await queue.close();
  });

  it('a handed-back message stays away until the process is surely gone', async () => {
    const drain = createDrain({ clock: systemClock, drainMs: 10, graceMs: 300, exitMs: 700 });
    const handler = drain.handler(async () => Consume.failure('cut'));
    const message: LiteMessage = { messageId: 'm', liteTopic: 't', body: 'x', attempt: 1 };
    expect(await handler(message)).toEqual(Consume.failure('cut'));
    await drain.run(() => new Promise<void>(() => {}));
    // Visible again only after grace + exit: no receive of this process can take it back.
    expect(await handler(message)).toEqual(Consume.suspend(300 + 700 + 1_000));
    expect(drain.exitMs).toBe(700);
  });

  it('a stop that hangs for good still ends after drain time plus grace', async () => {
    const drain = createDrain({ clock: systemClock, drainMs: 100, graceMs: 100 });
    const outcome = await drain.run(() => new Promise<void>(() => {}));
    expect(outcome.drained).toBe(false);
    expect(outcome.elapsedMs).toBeLessThan(1_000);
  });
});
