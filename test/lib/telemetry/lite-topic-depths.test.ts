import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { LiteTopicDepths } from '../../../lib/telemetry/lite-topic-depths.js';

const flow = { tier: 'batch', tenant: 'acme', model: 'm' };

describe('LiteTopic depths', () => {
  it('counts admitted minus finished when the queue cannot tell, never below zero', () => {
    const topics = new LiteTopicDepths({ clock: new VirtualClock(0) });
    topics.admitted('lt-a', flow, 'acme-1');
    expect(topics.admitted('lt-a', flow, 'acme-2')).toMatchObject({ liteTopic: 'lt-a', depth: 2, account: 'acme-2' });
    topics.finished('lt-a', flow);
    topics.finished('lt-a', flow);
    topics.finished('lt-a', flow);
    expect([...topics.depths()]).toEqual([{ liteTopic: 'lt-a', ...flow, account: 'acme-2', depth: 0 }]);
  });

  it('reads the depth from the queue when it can tell', () => {
    const depth = new Map([['lt-a', 7]]);
    const topics = new LiteTopicDepths({ clock: new VirtualClock(0), depth: (lt) => depth.get(lt) ?? 0 });
    topics.seen('lt-a', flow, 'acme-1');
    expect([...topics.depths()].map((t) => [t.liteTopic, t.depth, t.account])).toEqual([['lt-a', 7, 'acme-1']]);
  });

  it('forgets a LiteTopic idle past idleMs only once nothing waits in it', async () => {
    const clock = new VirtualClock(0);
    const topics = new LiteTopicDepths({ clock, idleMs: 1_000 });
    topics.admitted('lt-empty', flow, 'a');
    topics.finished('lt-empty', flow);
    topics.admitted('lt-backlog', flow, 'b');
    await clock.advance(1_001);
    expect([...topics.depths()].map((t) => t.liteTopic)).toEqual(['lt-backlog']);
  });

  it('at its bound drops the empty LiteTopics at once, idle or not', () => {
    const topics = new LiteTopicDepths({ clock: new VirtualClock(0), maxTopics: 3 });
    topics.admitted('lt-1', flow, 'a');
    topics.seen('lt-2', flow, 'a');
    topics.seen('lt-3', flow, 'a');
    topics.seen('lt-4', flow, 'a');
    expect([...topics.depths()].map((t) => t.liteTopic)).toEqual(['lt-1', 'lt-4']);
  });
});
