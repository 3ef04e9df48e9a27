/**
 * The most slots a tier wanted at once (in use plus waiting) within a recent window:
 * how much of its reservation a lender should expect to need again before a long
 * borrowed call would end (gate-spec.ts). A sliding-window maximum over samples
 * taken as the scheduler sees the counts (monotonic deque: each sample enters and
 * leaves once).
 */
export class DemandPeak {
  private readonly samples = new Map<string, { t: number; v: number }[]>();

  observe(key: string, value: number, now: number): void {
    let q = this.samples.get(key);
    if (!q) this.samples.set(key, (q = []));
    // A sample below a later one can never be the maximum again.
    while (q.length > 0 && q[q.length - 1]!.v <= value) q.pop();
    q.push({ t: now, v: value });
  }

  /** The largest sample of `key` taken within `windowMs` before `now`; 0 when none. */
  peak(key: string, now: number, windowMs: number): number {
    const q = this.samples.get(key);
    if (!q) return 0;
    let drop = 0;
    while (drop < q.length && q[drop]!.t < now - windowMs) drop++;
    if (drop > 0) q.splice(0, drop);
    return q[0]?.v ?? 0;
  }
}
