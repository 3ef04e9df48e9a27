import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { StallNudger } from '../../../lib/queue/rocketmq/nudge.js';

function nudger() {
  const clock = new VirtualClock(0);
  const sent: Array<[string, number]> = [];
  const n = new StallNudger({
    clock,
    afterMs: 500,
    send: async (liteTopic) => {
      sent.push([liteTopic, clock.now()]);
    },
  });
  return { clock, sent, n };
}

describe('StallNudger', () => {
  it('nudges a LiteTopic that stays silent after its message was acked, once', async () => {
    const { clock, sent, n } = nudger();
    n.arrived('a');
    await clock.advance(100);
    n.settled('a');
    await clock.advance(499);
    expect(sent).toEqual([]);
    await clock.advance(1);
    expect(sent).toEqual([['a', 600]]);
    await clock.advance(10_000);
    expect(sent).toHaveLength(1);
  });

  it('does not nudge when the next message arrives in time', async () => {
    const { clock, sent, n } = nudger();
    n.arrived('a');
    n.settled('a');
    await clock.advance(300);
    n.arrived('a');
    await clock.advance(5_000);
    expect(sent).toEqual([]);
    // That message, settled in turn, starts its own wait.
    n.settled('a');
    await clock.advance(500);
    expect(sent).toEqual([['a', 5_800]]);
  });

  it('waits while another message of the LiteTopic is still in hand', async () => {
    const { clock, sent, n } = nudger();
    n.arrived('a');
    n.arrived('a');
    n.settled('a');
    await clock.advance(2_000);
    expect(sent).toEqual([]);
    n.settled('a');
    await clock.advance(500);
    expect(sent).toEqual([['a', 2_500]]);
  });

  it('counts a pause: a message suspended for 1 s is awaited 1 s plus the grace', async () => {
    const { clock, sent, n } = nudger();
    n.arrived('a');
    n.settled('a', 1_000);
    await clock.advance(1_499);
    expect(sent).toEqual([]);
    await clock.advance(1);
    expect(sent).toEqual([['a', 1_500]]);
  });

  it('keeps LiteTopics apart and forgets them once nudged or closed', async () => {
    const { clock, sent, n } = nudger();
    n.arrived('a');
    n.arrived('b');
    n.settled('a');
    await clock.advance(200);
    n.settled('b');
    await clock.advance(300);
    expect(sent).toEqual([['a', 500]]);
    n.close();
    await clock.advance(1_000);
    expect(sent).toEqual([['a', 500]]);
    expect(clock.pending).toBe(0);
  });

  it('ignores a settle for a message it never saw arrive', async () => {
    const { clock, sent, n } = nudger();
    n.settled('ghost');
    await clock.advance(1_000);
    expect(sent).toEqual([]);
  });
});
