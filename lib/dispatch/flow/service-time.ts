/**
 * A model's observed speed: milliseconds of slot time per token, a moving
 * average over completed calls. It turns token estimates into the time a call
 * will hold its slot (lending, deadline checks, how long to Suspend).
 *
 * Before a model's first completion there is no average, but its calls in flight
 * already bound it from below: a call that began `elapsed` ms ago for at most
 * `tokens` tokens takes at least `elapsed / tokens` ms a token (atLeastMs).
 *
 * A request asks for its prompt and max_tokens, which many clients set far above what
 * they use: the share of what it asked that a call used, a moving average per model and
 * tier, turns what a waiter asks into what it is expected to use (expectedTokens). Taken at
 * its word, a realtime request asking 1,024 tokens to use a few hundred counted as ten
 * times its work: requests were answered they could not start in time that would have.
 * The share may pass 1: a client that leaves max_tokens out is estimated at the model's
 * default and generates until the model stops, often far more; counted at the default, its
 * calls looked short, lenders lent against them and realtime was trapped behind them.
 */

const WEIGHT = 0.1;
/** One call's share, at most: a slip of the estimate (a 1-token ask) must not swamp the average. */
const MAX_USED_SHARE = 32;

interface Running {
  readonly at: number;
  readonly tokens: number;
}

export class ServiceTime {
  private readonly msPerToken = new Map<string, number>();
  /** Per model, calls in flight, until the model's first completion. */
  private readonly running = new Map<string, Map<string, Running>>();
  /** Per model and tier: the share of the tokens asked that calls used. */
  private readonly usedShare = new Map<string, number>();

  observe(model: string, slotMs: number, tokens: number): void {
    if (!(tokens > 0) || !(slotMs >= 0)) return;
    const sample = slotMs / tokens;
    const prev = this.msPerToken.get(model);
    this.msPerToken.set(model, prev === undefined ? sample : prev + WEIGHT * (sample - prev));
    this.running.delete(model);
  }

  /** A call of the model and tier that asked for `asked` tokens used `used`. */
  observeUse(model: string, tier: string, used: number, asked: number): void {
    if (!(asked > 0) || !(used >= 0)) return;
    const key = `${model}\n${tier}`;
    const sample = Math.min(MAX_USED_SHARE, used / asked);
    const prev = this.usedShare.get(key);
    this.usedShare.set(key, prev === undefined ? sample : prev + WEIGHT * (sample - prev));
  }

  /** Tokens a request of the model and tier asking for `asked` is expected to use: all of them until a call says otherwise. */
  expectedTokens(model: string, tier: string, asked: number): number {
    return asked * (this.usedShare.get(`${model}\n${tier}`) ?? 1);
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
