/**
 * The near-limit warnings the dashboard lists: one line per account and model, the
 * latest first, carrying how many came since it first showed. Bounded to `keep` lines.
 */
import type { WarningRecord } from './live-state.js';

export class RecentWarnings {
  private readonly lines: WarningRecord[] = [];

  constructor(private readonly keep = 50) {}

  add(warning: Omit<WarningRecord, 'count'>): void {
    const i = this.lines.findIndex((w) => w.account === warning.account && w.model === warning.model);
    const count = i >= 0 ? this.lines[i]!.count + 1 : 1;
    if (i >= 0) this.lines.splice(i, 1);
    this.lines.unshift({ ...warning, count });
    if (this.lines.length > this.keep) this.lines.length = this.keep;
  }

  latest(n: number): WarningRecord[] {
    return this.lines.slice(0, n);
  }
}
