/**
 * Alerts: conditions an operator must hear about. Each firing is one structured
 * log event (`event: "alert"`, at warn level) and one `alerts` metric increment,
 * and is kept for the dashboard. Repeats of the same alert and key within the
 * cooldown are counted but not logged again, so a flood stays one line per
 * cooldown per LiteTopic or tenant.
 */
import type { Clock } from '../clock/clock.js';
import type { Labels, MetricSink } from './catalog.js';
import type { Logger } from './log.js';

export const ALERTS = {
  /** A high-priority tier (realtime) is near, or at, one of its limits. */
  'realtime-near-limit': 'a high-priority account is near its limit',
  /** Envelopes are reaching the dead-letter queue. */
  'dead-letters': 'requests are being dead-lettered',
  /** The broker refuses envelopes and they go to the SQS spillover queue. */
  'spillover-in-use': 'the spillover queue is in use',
  /** A LiteTopic's wait (observed, or expected from depth and pace) is above its tier's maximum. */
  'queue-wait-above-max': "a LiteTopic's wait is above its tier's maximum",
} as const;

export type AlertName = keyof typeof ALERTS;

export interface AlertFields {
  readonly tier?: string;
  readonly tenant?: string;
  readonly account?: string;
  readonly model?: string;
  readonly liteTopic?: string;
  readonly [extra: string]: string | number | undefined;
}

export interface AlertRecord {
  readonly at: number;
  readonly alert: AlertName;
  readonly key: string;
  readonly message: string;
  readonly fields: AlertFields;
  /** Occurrences folded into this record during the cooldown before it. */
  readonly repeats: number;
}

export interface AlertsOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly sinks: readonly MetricSink[];
  readonly cooldownMs?: number;
  /** Alert records kept for the dashboard. */
  readonly keep?: number;
}

export class Alerts {
  private readonly cooldownMs: number;
  private readonly keep: number;
  private readonly last = new Map<string, { at: number; suppressed: number }>();
  private readonly recentRecords: AlertRecord[] = [];

  constructor(private readonly options: AlertsOptions) {
    this.cooldownMs = options.cooldownMs ?? 30_000;
    this.keep = options.keep ?? 50;
  }

  /** Raises `alert` for `key` (a LiteTopic, tenant, ...); returns whether it fired (was not in cooldown). */
  raise(alert: AlertName, key: string, fields: AlertFields, detail?: string): boolean {
    const now = this.options.clock.now();
    const id = `${alert}|${key}`;
    const prev = this.last.get(id);
    if (prev && now - prev.at < this.cooldownMs) {
      prev.suppressed++;
      return false;
    }
    const repeats = prev?.suppressed ?? 0;
    this.last.set(id, { at: now, suppressed: 0 });
    if (this.last.size > 10_000) this.forgetOld(now);
    const message = detail ? `${ALERTS[alert]}: ${detail}` : ALERTS[alert];
    const clean = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as AlertFields;
    this.options.log.warn(
      { event: 'alert', alert, key, ...clean, ...(repeats ? { repeats } : {}) },
      `alert: ${message}`,
    );
    const labels: Labels = { alert, tier: fields.tier ?? '' };
    for (const sink of this.options.sinks) sink.count('alerts', labels, 1);
    this.recentRecords.unshift({ at: now, alert, key, message, fields: clean, repeats });
    if (this.recentRecords.length > this.keep) this.recentRecords.length = this.keep;
    return true;
  }

  /** Most recent first. */
  recent(): readonly AlertRecord[] {
    return this.recentRecords;
  }

  /** Alerts raised within the cooldown: what is going on now. */
  active(): AlertRecord[] {
    const now = this.options.clock.now();
    const seen = new Set<string>();
    return this.recentRecords.filter((r) => {
      const id = `${r.alert}|${r.key}`;
      if (seen.has(id) || now - (this.last.get(id)?.at ?? r.at) >= this.cooldownMs) return false;
      seen.add(id);
      return true;
    });
  }

  private forgetOld(now: number): void {
    for (const [id, v] of this.last) if (now - v.at >= this.cooldownMs) this.last.delete(id);
  }
}
