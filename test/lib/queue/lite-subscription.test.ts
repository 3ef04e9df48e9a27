import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { keepLiteSubscription } from '../../../lib/queue/rocketmq/lite-subscription.js';

/** Shaped like rocketmq-client-nodejs 1.0.8's LiteSubscriptionManager: syncAll catches what sync throws. */
class FakeManager {
  readonly syncs: number[] = [];
  brokerUp = true;
  constructor(private readonly clock: VirtualClock) {}
  async syncLiteSubscription(): Promise<void> {
    this.syncs.push(this.clock.now());
    if (!this.brokerUp) throw new Error('group not found');
  }
  async syncAllLiteSubscription(): Promise<void> {
    try {
      await this.syncLiteSubscription();
    } catch {
      // logged by the client, then dropped
    }
  }
}

function kept({ brokerUp = true } = {}) {
  const clock = new VirtualClock(0);
  const manager = new FakeManager(clock);
  manager.brokerUp = brokerUp;
  const keeper = keepLiteSubscription(
    { liteSubscriptionManager: manager },
    { clock, retryMs: 1_000, maxRetryMs: 4_000 },
  )!;
  return { clock, manager, keeper };
}

describe('keepLiteSubscription', () => {
  it('syncs once when it starts keeping, since the client start-up sync may have failed unseen', async () => {
    const { clock, manager } = kept();
    await clock.advance(0);
    expect(manager.syncs).toEqual([0]);
    await clock.advance(60_000);
    expect(manager.syncs).toEqual([0]);
  });

  it('tries a failed sync again, backing off to its longest wait, until one succeeds', async () => {
    const { clock, manager } = kept({ brokerUp: false });
    await clock.advance(0);
    await clock.advance(12_000);
    expect(manager.syncs).toEqual([0, 1_000, 3_000, 7_000, 11_000]);
    manager.brokerUp = true;
    await clock.advance(4_000);
    expect(manager.syncs.at(-1)).toBe(15_000);
    await clock.advance(60_000);
    expect(manager.syncs).toHaveLength(6);
  });

  it('sees failures of the client own syncs (its 30 s timer) and retries them too', async () => {
    const { clock, manager } = kept();
    await clock.advance(0);
    manager.brokerUp = false;
    await clock.advance(29_000);
    await manager.syncAllLiteSubscription(); // the client's timer, at 29 s
    expect(manager.syncs).toEqual([0, 29_000]);
    manager.brokerUp = true;
    await clock.advance(1_000);
    expect(manager.syncs).toEqual([0, 29_000, 30_000]);
  });

  it('syncs at once when receives work again after failing, and not on every receive', async () => {
    const { clock, manager, keeper } = kept();
    await clock.advance(0);
    keeper.receiveSucceeded();
    await clock.advance(5_000);
    expect(manager.syncs).toEqual([0]);
    keeper.receiveFailed();
    keeper.receiveFailed();
    await clock.advance(5_000);
    expect(manager.syncs).toEqual([0]);
    keeper.receiveSucceeded();
    keeper.receiveSucceeded();
    await clock.advance(0);
    expect(manager.syncs).toEqual([0, 10_000]);
  });

  it('stops syncing once stopped', async () => {
    const { clock, manager, keeper } = kept({ brokerUp: false });
    await clock.advance(0);
    keeper.stop();
    keeper.receiveFailed();
    keeper.receiveSucceeded();
    await clock.advance(60_000);
    expect(manager.syncs).toEqual([0]);
  });

  it('keeps nothing on a client without the manager it knows', () => {
    const clock = new VirtualClock(0);
    expect(keepLiteSubscription({}, { clock })).toBeUndefined();
    expect(keepLiteSubscription({ liteSubscriptionManager: { syncLiteSubscription: 1 } }, { clock })).toBeUndefined();
  });
});
