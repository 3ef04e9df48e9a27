/**
 * A model's observed speed: milliseconds of slot time per token, a moving
 * average over completed calls. It turns token estimates into the time a call
 * will hold its slot (lending, deadline checks, how long to Suspend).
 *
 * Before a model's first completion there is no average, but its calls in flight
 * already bound it from below: a call that began `elapsed` ms ago for at most
 * `tokens` tokens takes at least `elapsed / tokens` ms a token (atLeastMs).
 */

const WEIGHT = 0.1;

interface Running {
  readonly at: number;
  readonly tokens: number;
}

export class ServiceTime {
  private readonly msPerToken = new Map<string, number>();
  /** Per model, calls in flight, until the model's first completion. */
  private readonly running = new Map<string, Map<string, Running>>();

  observe(model: string, slotMs: number, tokens: number): void {
    if (!(tokens > 0) || !(slotMs >= 0)) return;
    const sample = slotMs / tokens;
    const prev = this.msPerToken.get(model);
    this.msPerToken.set(model, prev === undefined ? sample : prev + WEIGHT * (sample - prev));
    this.running.delete(model);
  }

  /** A call of the model began at `at`, expected to use at most `tokens`. */
  started(model: string, id: string, at: number, tokens: number): void {
    if (this.msPerToken.has(model) || !(tokens > 0)) return;
    let calls = this.running.get(model);
    if (!calls) this.running.set(model, (calls = new Map()));
    calls.set(id, { at, tokens });
  }

  ended(model: string, id: string): void {
    this.running.get(model)?.delete(id);
  }

  /** Expected slot time of a call of `tokens`, or undefined before the model's first completion. */
  estimateMs(model: string, tokens: number): number | undefined {
    const rate = this.msPerToken.get(model);
    return rate === undefined ? undefined : rate * tokens;
  }

  /**
   * The expected slot time of a call of `tokens`; before the first completion, the least it can
   * be given the calls in flight at `now` (0 with none, or none begun yet).
   */
  atLeastMs(model: string, tokens: number, now: number): number {
    const known = this.estimateMs(model, tokens);
    if (known !== undefined) return known;
    let rate = 0;
    for (const call of this.running.get(model)?.values() ?? []) rate = Math.max(rate, (now - call.at) / call.tokens);
    return rate * tokens;
  }
}
