/**
 * Failures per message id. The broker's deliveryAttempt is no failure count: on
 * 5.5.0 it reads 2 after any Suspend and stays there (test/scripts/rocketmq.int.test.ts),
 * so failures are counted here. The map is bounded: a message that left for another
 * consumer never reports back, and the oldest entries go first. A consumer restart
 * forgets counts, so a message may get more attempts than the limit, never fewer.
 */
export class FailureCounts {
  private readonly counts = new Map<string, number>();

  constructor(private readonly capacity = 100_000) {}

  get(messageId: string): number {
    return this.counts.get(messageId) ?? 0;
  }

  set(messageId: string, failures: number): void {
    this.counts.delete(messageId);
    this.counts.set(messageId, failures);
    if (this.counts.size > this.capacity) {
      const oldest = this.counts.keys().next().value;
      if (oldest !== undefined) this.counts.delete(oldest);
    }
  }

  forget(messageId: string): void {
    this.counts.delete(messageId);
  }
}
