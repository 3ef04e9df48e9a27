/**
 * Ids of messages this consumer has already acked. In a non-orderly group the broker
 * still pops each LiteTopic as a FIFO queue (PopLiteMessageProcessor on 5.5.0): after a
 * Suspend it redelivers the popped batch from the suspended message on, including
 * messages of that batch that were handled and acked meanwhile
 * (test/scripts/rocketmq-concurrent.int.test.ts). Those are acked again without
 * running the handler. Bounded like FailureCounts: the oldest ids go first; an id
 * forgotten (or a redelivery reaching another consumer) is handled again, so delivery
 * stays at least once.
 */
export class SettledIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 100_000) {}

  has(messageId: string): boolean {
    return this.ids.has(messageId);
  }

  add(messageId: string): void {
    this.ids.delete(messageId);
    this.ids.add(messageId);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}
