/**
 * A model's observed speed: the slot time a call takes for its prompt and for its output,
 * learnt from completed calls. It turns token estimates into the time a call will hold its
 * slot (lending, deadline checks, how long to Suspend).
 *
 * Prompt and output tokens cost very differently: a prompt is read in one batched pass
 * (prefill), the output one token a step (decode). By one rate over all tokens, where
 * realtime requests carried 6,000-token retrieved contexts for answers of 50-200 tokens
 * beside batch generating 500-2,000 from short prompts, each was judged at the other's pace:
 * realtime requests looked a minute long and were answered they could not start in time,
 * batch calls looked short and lenders lent against them (realtime 89.54 % served, every
 * baseline 100 %). So the time of a call is fitted as a × prompt + b × output, by least
 * squares over a moving window of completed calls (MovingFit), held to a prior ratio of the
 * two rates only as far as the calls cannot tell them apart (calls of one shape).
 *
 * Before a model's first completion there is no fit, but its calls in flight already bound
 * it from below: a call that began `elapsed` ms ago takes at least that, and at the prior
 * ratio of the rates, so much a token (atLeastMs).
 *
 * A request asks for its prompt and max_tokens, which many clients set far above what they
 * use: the share of its max_tokens that a call used, a moving average per model and flow
 * (tier × tenant × account), drawn towards that of its tier's asks of the same size until the
 * flow has made a few calls, turns what a waiter asks into what it is expected to generate
 * (expectedOutput). Per flow
 * because clients of one tier differ: where half the accounts asked 4,096 tokens and the
 * other half left max_tokens out, both generating 200-1,000, the tier's share counted the
 * first four times too long and the second twice too short, and realtime was both answered
 * late and trapped by lending. Taken at its word, a realtime request asking 1,024 tokens to
 * use a few hundred counted as ten times its work: requests were answered they could not
 * start in time that would have. The share may pass 1: a client that leaves max_tokens out
 * is estimated at the model's default and generates until the model stops, often far more;
 * counted at the default, its calls looked short, lenders lent against them and realtime was
 * trapped behind them.
 */

/** A call's tokens: its prompt's and its output's. */
export interface Tokens {
  readonly prompt: number;
  readonly output: number;
}

const WEIGHT = 0.1;
/** One call's share, at most: a slip of the estimate (a 1-token ask) must not swamp the average. */
const MAX_USED_SHARE = 32;
/**
 * A flow's share counts as many calls of its own, at most, against its tier's asks of its size as TIER_PRIOR_CALLS:
 * the lengths of one flow's calls vary too, and taken alone, the first call of each realtime account
 * of test/bench/under-ask.test.ts set its flow's share, and lending trusted it (97.87 % served).
 */
const FLOW_CALLS_TRUSTED = 10;
const TIER_PRIOR_CALLS = 3;
/** Flows whose share is remembered, at most: the least recently used go first. */
export const MAX_FLOW_SHARES = 4_096;

/**
 * A prompt token's slot time against an output token's, before calls tell them apart: a GPU
 * reads a prompt in batched passes, hundreds of tokens in the time of one decode step.
 */
export const PRIOR_PROMPT_RATIO = 0.01;
/** How firmly the fit holds to the prior ratio, as a share of the calls' own weight. */
const PRIOR_FIRMNESS = 1e-3;

/** Whose calls a share is learnt from: a flow of the fair queue. */
export interface Asker {
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
}

interface Running {
  readonly at: number;
  readonly tokens: Tokens;
}

function average(prev: number | undefined, sample: number, weight = WEIGHT): number {
  return prev === undefined ? sample : prev + weight * (sample - prev);
}

function tierKeyOf(model: string, tier: string): string {
  return `${model}\n${tier}`;
}

/**
 * Asks of one size (the same power of two, to the nearest) in a tier: what a flow without calls of its own is
 * judged by. Clients that ask alike use alike: one that leaves max_tokens out asks the model's
 * default, one that sets it far above its needs asks thousands, and in one tier their shares
 * were 2.3 and 0.15. By the tier's mix of both, an account asking 4,096 with three calls of its
 * own behind it was still expected to generate 2,750 tokens, not 600, and was answered it could
 * not start in time.
 */
function askKeyOf(model: string, tier: string, asked: number): string {
  return `${tierKeyOf(model, tier)}\n${Math.round(Math.log2(asked))}`;
}

function flowKeyOf(model: string, who: Asker): string {
  return `${tierKeyOf(model, who.tier)}\n${who.tenant}\n${who.account}`;
}

const slotMs = (rates: { perPrompt: number; perOutput: number }, t: Tokens) =>
  rates.perPrompt * t.prompt + rates.perOutput * t.output;

/** Output tokens a call's time is worth at the prior ratio: what bounds its pace before any fit. */
const priorTokens = (t: Tokens) => PRIOR_PROMPT_RATIO * t.prompt + t.output;

/**
 * Slot time ≈ a × prompt + b × output, by least squares over calls weighted by a moving
 * average (its sums, not its samples, are kept). The normal equations are held towards
 * a = PRIOR_PROMPT_RATIO × b by a penalty a small share of the calls' own weight: calls of one
 * shape (the same prompt/output ratio) cannot tell a from b, and the prior decides; calls
 * of many shapes outweigh it. Neither rate is negative.
 */
export class MovingFit {
  private pp = 0;
  private po = 0;
  private oo = 0;
  private py = 0;
  private oy = 0;
  private seen = false;
  /** The last solution, until the next call: estimates read it for every waiter. */
  private solved: { perPrompt: number; perOutput: number } | undefined;

  add(t: Tokens, ms: number): void {
    const w = this.seen ? WEIGHT : 1;
    const mix = (prev: number, sample: number) => prev + w * (sample - prev);
    this.pp = mix(this.pp, t.prompt * t.prompt);
    this.po = mix(this.po, t.prompt * t.output);
    this.oo = mix(this.oo, t.output * t.output);
    this.py = mix(this.py, t.prompt * ms);
    this.oy = mix(this.oy, t.output * ms);
    this.seen = true;
    this.solved = undefined;
  }

  /** ms per prompt token and per output token, or undefined before any call. */
  rates(): { perPrompt: number; perOutput: number } | undefined {
    if (!this.seen) return undefined;
    return (this.solved ??= this.solve());
  }

  private solve(): { perPrompt: number; perOutput: number } {
    const r = PRIOR_PROMPT_RATIO;
    // The penalty's matrix is singular only along a = r·b; the calls' only along a ratio of
    // token counts, never negative: their sum is invertible.
    const mu = PRIOR_FIRMNESS * (this.pp + this.oo);
    const [a11, a12, a22] = [this.pp + mu, this.po - mu * r, this.oo + mu * r * r];
    const det = a11 * a22 - a12 * a12;
    const a = (this.py * a22 - this.oy * a12) / det;
    const b = (this.oy * a11 - this.py * a12) / det;
    if (a >= 0 && b >= 0) return { perPrompt: a, perOutput: b };
    // One rate would be negative: the best fit with it at 0.
    return a < 0
      ? { perPrompt: 0, perOutput: this.oo > 0 ? this.oy / this.oo : 0 }
      : { perPrompt: this.pp > 0 ? this.py / this.pp : 0, perOutput: 0 };
  }
}

export class ServiceTime {
  private readonly fits = new Map<string, MovingFit>();
  /** Per model, calls in flight, until the model's first completion. */
  private readonly running = new Map<string, Map<string, Running>>();
  /**
   * Per model and tier, and per model, tier and size of ask: the share of the output tokens
   * asked that calls generated.
   */
  private readonly usedShare = new Map<string, number>();
  /** The same per model and flow, with the calls it was learnt from, in order of last use. */
  private readonly flowShare = new Map<string, { share: number; calls: number }>();

  /** A completed call of the model held its slot `slotMs` for `used` tokens. */
  observe(model: string, slotMs: number, used: Tokens): void {
    if (!(used.prompt >= 0) || !(used.output >= 0) || !(used.prompt + used.output > 0) || !(slotMs >= 0)) return;
    let fit = this.fits.get(model);
    if (!fit) this.fits.set(model, (fit = new MovingFit()));
    fit.add(used, slotMs);
    this.running.delete(model);
  }

  /** A call of the model by `who` that asked for `asked` output tokens (max_tokens) generated `used`. */
  observeUse(model: string, who: Asker, used: number, asked: number): void {
    if (!(asked > 0) || !(used >= 0)) return;
    const sample = Math.min(MAX_USED_SHARE, used / asked);
    for (const key of [tierKeyOf(model, who.tier), askKeyOf(model, who.tier, asked)])
      this.usedShare.set(key, average(this.usedShare.get(key), sample));
    const flowKey = flowKeyOf(model, who);
    const prev = this.flowShare.get(flowKey);
    const calls = Math.min(FLOW_CALLS_TRUSTED, (prev?.calls ?? 0) + 1);
    // A plain mean over its first calls, a moving average after: one call's length is not its flow's.
    const share = average(prev?.share, sample, Math.max(WEIGHT, 1 / calls));
    this.flowShare.delete(flowKey);
    this.flowShare.set(flowKey, { share, calls });
    if (this.flowShare.size > MAX_FLOW_SHARES) this.flowShare.delete(this.flowShare.keys().next().value!);
  }

  /**
   * Output tokens a request of the model by `who` asking for `asked` (max_tokens) is expected
   * to generate: its flow's share, or its tier's, or all of them until a call says otherwise.
   */
  expectedOutput(model: string, who: Asker, asked: number): number {
    const tier =
      this.usedShare.get(askKeyOf(model, who.tier, asked)) ?? this.usedShare.get(tierKeyOf(model, who.tier)) ?? 1;
    const flow = this.flowShare.get(flowKeyOf(model, who));
    if (!flow) return asked * tier;
    return asked * ((flow.calls * flow.share + TIER_PRIOR_CALLS * tier) / (flow.calls + TIER_PRIOR_CALLS));
  }

  /** A call of the model began at `at`, expected to use at most `tokens`. */
  started(model: string, id: string, at: number, tokens: Tokens): void {
    if (this.fits.has(model) || !(priorTokens(tokens) > 0)) return;
    let calls = this.running.get(model);
    if (!calls) this.running.set(model, (calls = new Map()));
    calls.set(id, { at, tokens });
  }

  ended(model: string, id: string): void {
    this.running.get(model)?.delete(id);
  }

  /** Expected slot time of a call of `tokens`, or undefined before the model's first completion. */
  estimateMs(model: string, tokens: Tokens): number | undefined {
    const rates = this.fits.get(model)?.rates();
    return rates && slotMs(rates, tokens);
  }

  /**
   * The expected slot time of a call, as a function of its tokens; before the first completion,
   * the least it can be given the calls in flight at `now`, at the prior ratio of the rates (0
   * with none, or none begun yet). One function for many calls: the calls in flight are read once.
   */
  atLeast(model: string, now: number): (tokens: Tokens) => number {
    const rates = this.fits.get(model)?.rates();
    if (rates) return (t) => slotMs(rates, t);
    let rate = 0;
    for (const call of this.running.get(model)?.values() ?? [])
      rate = Math.max(rate, (now - call.at) / priorTokens(call.tokens));
    return (t) => rate * priorTokens(t);
  }
}
