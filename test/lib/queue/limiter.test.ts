import { describe, expect, it } from 'vitest';
import { Limiter } from '../../../lib/queue/rocketmq/limiter.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('the RocketMQ adapter’s handler limiter', () => {
  it('a run that releases its place lets the next one start while it goes on, once however often it releases', async () => {
    const limiter = new Limiter(1);
    let finish!: () => void;
    const first = limiter.run(async (release) => {
      release();
      release();
      await new Promise<void>((r) => (finish = r));
      return 'first';
    });
    await tick();
    const started: string[] = [];
    const second = limiter.run(async () => void started.push('second'));
    const third = limiter.run(async () => void started.push('third'));
    await second;
    await third;
    // The first still runs: its released place served the second, then the third.
    expect(started).toEqual(['second', 'third']);
    expect(limiter.running).toBe(0);
    finish();
    expect(await first).toBe('first');
    expect(limiter.running).toBe(0);
  });

  it('without a release, the limit holds', async () => {
    const limiter = new Limiter(1);
    let finish!: () => void;
    const first = limiter.run(() => new Promise<void>((r) => (finish = r)));
    let secondStarted = false;
    const second = limiter.run(async () => void (secondStarted = true));
    await tick();
    expect([secondStarted, limiter.running, limiter.queued]).toEqual([false, 1, 1]);
    finish();
    await first;
    await second;
    expect(secondStarted).toBe(true);
    expect(limiter.running).toBe(0);
  });
});
