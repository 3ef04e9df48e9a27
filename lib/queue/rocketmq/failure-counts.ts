/**
 * Failures per message id, for handlers that throw or hang (a crash, not an answer).
 * The broker's deliveryAttempt is no failure count: on 5.5.0 it reads 2 after any
 * Suspend and stays there (test/scripts/rocketmq.int.test.ts). Upstream failures are
 * counted per request id in the shared store (lib/dispatch/attempts.ts), which is
 * what bounds a request's GPU calls across restarts and dispatchers; this in-memory
 * map only keeps a handler that keeps crashing from looping forever. It is bounded:
 * a message that left for another consumer never reports back, and the oldest
 * entries go first. A consumer restart forgets counts, so a crashing handler may get
 * more attempts than the limit, never fewer.
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
