/**
 * Holds the policy in force. Reloads from its source on change or on a timer; a
 * new document that fails validation is refused with a log line and a count, and
 * the last good policy stays in force: never a crash, never "unlimited".
 */
import type { Clock } from '../clock/clock.js';
import type { Logger } from '../telemetry/log.js';
import { parsePolicy, type Policy } from './schema.js';
import type { PolicySource } from './source.js';

export interface PolicyHolderOptions {
  readonly source: PolicySource;
  readonly clock: Clock;
  readonly log: Logger;
  /** Reload this often even without a change notice (SSM has none). 0 = only on notice. */
  readonly refreshMs?: number;
  /** Called with each refused document's reason, e.g. to count it. */
  readonly onRejected?: (reason: string) => void;
  readonly onApplied?: (policy: Policy) => void;
}

export interface PolicyHolder {
  current(): Policy;
  /** Reads the source now; resolves true when a new policy was applied. */
  refresh(): Promise<boolean>;
  readonly rejections: number;
  /** When the source was last read (the dashboard shows each instance's). */
  readonly checkedAt: number;
  close(): void;
}

/** Loads the first policy (failing loudly: there is no last good one yet) and keeps it fresh. */
export async function createPolicyHolder(options: PolicyHolderOptions): Promise<PolicyHolder> {
  const { source, clock, log } = options;
  let policy = parsePolicy(await source.load());
  let checkedAt = clock.now();
  let serialized = JSON.stringify(policy);
  let rejections = 0;
  let closed = false;
  let pending: Promise<boolean> | undefined;

  async function reload(): Promise<boolean> {
    let next: Policy;
    try {
      const raw = await source.load();
      checkedAt = clock.now();
      next = parsePolicy(raw);
    } catch (error) {
      rejections++;
      const reason = error instanceof Error ? error.message : String(error);
      log.error({ source: source.name, reason }, 'policy refused; the last good policy stays in force');
      options.onRejected?.(reason);
      return false;
    }
    const text = JSON.stringify(next);
    if (text === serialized) return false;
    policy = next;
    serialized = text;
    log.info({ source: source.name }, 'policy applied');
    options.onApplied?.(policy);
    return true;
  }

  const refresh = () => (pending ??= reload().finally(() => (pending = undefined)));
  const stopWatching = source.watch?.(() => void refresh());
  let cancelTimer: (() => void) | undefined;
  const tick = () => {
    if (closed || !options.refreshMs) return;
    cancelTimer = clock.setTimer(options.refreshMs, () => void refresh().finally(tick));
  };
  tick();

  return {
    current: () => policy,
    refresh,
    get rejections() {
      return rejections;
    },
    get checkedAt() {
      return checkedAt;
    },
    close() {
      closed = true;
      stopWatching?.();
      cancelTimer?.();
    },
  };
}
