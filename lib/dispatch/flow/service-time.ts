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
 * flow (tier × tenant × account), or its tier's until the flow has one, turns what a waiter
 * asks into what it is expected to use (expectedTokens). Per flow because clients of one tier
 * differ: where half the accounts asked 4,096 tokens and the other half left max_tokens out,
 * both generating 200-1,000, the tier's share counted the first four times too long and the
 * second twice too short, and realtime was both answered late and trapped by lending. Taken at
 * its word, a realtime request asking 1,024 tokens to use a few hundred counted as ten
 * times its work: requests were answered they could not start in time that would have.
 * The share may pass 1: a client that leaves max_tokens out is estimated at the model's
 * default and generates until the model stops, often far more; counted at the default, its
 * calls looked short, lenders lent against them and realtime was trapped behind them.
 */

const WEIGHT = 0.1;
/** One call's share, at most: a slip of the estimate (a 1-token ask) must not swamp the average. */
const MAX_USED_SHARE = 32;
/**
 * A flow's share counts as many calls of its own, at most, against its tier's as TIER_PRIOR_CALLS:
 * the lengths of one flow's calls vary too, and taken alone, the first call of each realtime account
 * of test/bench/under-ask.test.ts set its flow's share, and lending trusted it (97.87 % served).
 */
const FLOW_CALLS_TRUSTED = 10;
const TIER_PRIOR_CALLS = 3;
/** Flows whose share is remembered, at most: the least recently used go first. */
export const MAX_FLOW_SHARES = 4_096;

/** Whose calls a share is learnt from: a flow of the fair queue. */
export interface Asker {
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
}

interface Running {
  readonly at: number;
  readonly tokens: number;
}

function average(prev: number | undefined, sample: number): number {
  return prev === undefined ? sample : prev + WEIGHT * (sample - prev);
}

function flowKeyOf(model: string, who: Asker): string {
  return `${model}\n${who.tier}\n${who.tenant}\n${who.account}`;
}

export class ServiceTime {
  private readonly msPerToken = new Map<string, number>();
  /** Per model, calls in flight, until the model's first completion. */
  private readonly running = new Map<string, Map<string, Running>>();
  /** Per model and tier: the share of the tokens asked that calls used. */
  private readonly usedShare = new Map<string, number>();
  /** The same per model and flow, with the calls it was learnt from, in order of last use. */
  private readonly flowShare = new Map<string, { share: number; calls: number }>();

  observe(model: string, slotMs: number, tokens: number): void {
    if (!(tokens > 0) || !(slotMs >= 0)) return;
    const sample = slotMs / tokens;
    const prev = this.msPerToken.get(model);
    this.msPerToken.set(model, prev === undefined ? sample : prev + WEIGHT * (sample - prev));
    this.running.delete(model);
  }

  /** A call of the model by `who` that asked for `asked` tokens used `used`. */
  observeUse(model: string, who: Asker, used: number, asked: number): void {
    if (!(asked > 0) || !(used >= 0)) return;
    const sample = Math.min(MAX_USED_SHARE, used / asked);
    const tierKey = `${model}\n${who.tier}`;
    this.usedShare.set(tierKey, average(this.usedShare.get(tierKey), sample));
    const flowKey = flowKeyOf(model, who);
    const prev = this.flowShare.get(flowKey);
    const calls = Math.min(FLOW_CALLS_TRUSTED, (prev?.calls ?? 0) + 1);
    // A plain mean over its first calls, a moving average after: one call's length is not its flow's.
    const share = prev === undefined ? sample : prev.share + Math.max(WEIGHT, 1 / calls) * (sample - prev.share);
    this.flowShare.delete(flowKey);
    this.flowShare.set(flowKey, { share, calls });
    if (this.flowShare.size > MAX_FLOW_SHARES) this.flowShare.delete(this.flowShare.keys().next().value!);
  }

  /**
   * Tokens a request of the model by `who` asking for `asked` is expected to use: its flow's
   * share, or its tier's, or all of them until a call says otherwise.
   */
  expectedTokens(model: string, who: Asker, asked: number): number {
    const tier = this.usedShare.get(`${model}\n${who.tier}`) ?? 1;
    const flow = this.flowShare.get(flowKeyOf(model, who));
    if (!flow) return asked * tier;
    return asked * ((flow.calls * flow.share + TIER_PRIOR_CALLS * tier) / (flow.calls + TIER_PRIOR_CALLS));
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
