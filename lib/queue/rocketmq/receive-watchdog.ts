/**
 * Tells when a LitePushConsumer has stopped being able to receive and must be replaced.
 *
 * Why a consumer can die while its process lives: the 5.5 proxy's settings cleaner
 * (GrpcClientSettingsManager.onWaitEnd) drops the settings of a consumer whose channel
 * is no longer in its group, which happens when the broker is away long enough; a
 * heartbeat without settings is refused ("cannot find client settings for this
 * client"), so the channel never comes back, and every receive fails with an NPE on
 * `settings` (ReceiveMessageActivity). rocketmq-client-nodejs 1.0.8 sends its settings
 * again only when its telemetry stream breaks (the proxy stayed up, so it does not) or
 * on a slow timer. A new client sends them at start-up.
 */
export interface ReceiveWatchdogOptions {
  /** Failed receives in a row (no successful one between) before the consumer is replaced. */
  readonly failures: number;
  /**
   * ...that have lasted at least this long, so a short broker restart is ridden out by
   * the client itself. Not waited for when the last `failures` all say the proxy lost
   * the session (they follow a broker outage's own failures without a success between).
   */
  readonly periodMs: number;
}

export const defaultReceiveWatchdog: ReceiveWatchdogOptions = { failures: 5, periodMs: 30_000 };

/** The proxy's answer to a receive from a client whose settings it no longer holds. */
export function isLostSession(err: unknown): boolean {
  const text = err instanceof Error ? err.message : String(err);
  return text.includes('"settings" is null') || text.includes('cannot find client settings');
}

/** One streak of failed receives; a successful receive ends it. */
export class ReceiveWatchdog {
  private streak = 0;
  private since = 0;
  /** The failures at the end of the streak that say the session was lost. */
  private lostSessions = 0;

  constructor(private readonly opts: ReceiveWatchdogOptions) {}

  get failures(): number {
    return this.streak;
  }

  succeeded(): void {
    this.streak = 0;
    this.lostSessions = 0;
  }

  /** Records a failed receive; true when the consumer should be replaced. */
  failed(err: unknown, now: number): boolean {
    if (this.streak === 0) this.since = now;
    this.streak++;
    this.lostSessions = isLostSession(err) ? this.lostSessions + 1 : 0;
    if (this.lostSessions >= this.opts.failures) return true;
    return this.streak >= this.opts.failures && now - this.since >= this.opts.periodMs;
  }
}

/**
 * Reports each receive of a rocketmq-client-nodejs consumer. The client offers no hook,
 * so its `receiveMessage` (which every process queue looks up on the consumer for each
 * long poll) is wrapped on the instance. False when the client has no such method (a
 * different version): the caller then runs without a watchdog and says so.
 */
export function observeReceives(
  consumer: object,
  report: { ok(messages: readonly unknown[]): void; failed(err: unknown): void },
): boolean {
  const target = consumer as { receiveMessage?: (...args: unknown[]) => Promise<unknown> };
  const original = target.receiveMessage;
  if (typeof original !== 'function') return false;
  target.receiveMessage = async (...args: unknown[]) => {
    try {
      const messages = await original.apply(consumer, args);
      report.ok(Array.isArray(messages) ? messages : []);
      return messages;
    } catch (err) {
      report.failed(err);
      throw err;
    }
  };
  return true;
}
