/**
 * A flood's excess answered at admission instead of at its deadline.
 *
 * A dispatcher sees a LiteTopic's head only: the requests behind it wait in the broker, and
 * it judges each one (can it start before its deadline?) when it surfaces, which in a flood
 * from many accounts is near the end of its tier's wait (`npm run bench -- flood`: refused
 * after p50 294 s of batch's 300). The edge sees the whole LiteTopic (its reservoir count);
 * what it lacks is what the other flows of the tier hold and how fast the model starts work.
 * The dispatchers know both: the flows waiting on them, their LiteTopics' depths (read from
 * the reservoirs), and the model's slots and call times.
 *
 * In fair order every waiting flow starts one request per round, so within the tier's
 * maximum wait, the model's starts fill the flows up to a level, as water fills a basin: the
 * largest `cap` with the sum over flows of min(depth, cap) within those starts. A request
 * deeper than the level in its LiteTopic cannot start in time; the edge refuses it at once,
 * with a Retry-After of the rounds until it would fit. Only while the tier is over-committed:
 * when everything its LiteTopics hold fits, there is no level, and one flow's long burst
 * beside light ones is served whole as the others drain (`npm run bench -- mixed-overload`).
 *
 * The starts counted are the whole model's (its slots over the tier's mean call), not the
 * tier's share: a lighter tier's request is slowed while heavier tiers are busy, and refused
 * here only when even the whole GPU could not start it in time. The edge takes the highest
 * level reported (dispatchers that each see part of the flows report more than the truth,
 * never less).
 *
 * Both sides import this module: the key (lib/store/keys.ts fairShareKey), the encoding,
 * the rules.
 */

/** A report is forgotten after this long; a dispatcher with waiters reports every REPORT_EVERY_MS. */
export const FAIR_SHARE_TTL_MS = 5_000;
export const REPORT_EVERY_MS = 1_000;
/** Dispatchers remembered per model and tier; the least recent go first. */
export const MAX_REPORTERS = 64;
/** The edge reads the reports again after this long. */
export const FAIR_SHARE_READ_EVERY_MS = 1_000;

/** The level a tier's flows are filled to within its maximum wait, and how fast a flow at it starts. */
export interface FairShare {
  /** Requests a LiteTopic of the tier may hold and still start in time; at least 1. */
  readonly cap: number;
  /** Starts per second of a flow at the level: one per round of the waiting flows. */
  readonly rate: number;
}

/** What a dispatcher sees waiting for a model in one tier. */
export interface TierBacklog {
  /** Per flow with a request waiting (in the dispatcher or sent back from it): what its LiteTopic holds. */
  readonly depths: readonly number[];
  /** The model's slots. */
  readonly slots: number;
  /** The mean time a call of the tier holds a slot. */
  readonly meanCallMs: number;
  /** The tier's maximum queue wait. */
  readonly maxWaitMs: number;
}

/** The tier's fair share while it is over-committed; undefined when everything waiting fits (or nothing is known). */
export function fairShare({ depths, slots, meanCallMs, maxWaitMs }: TierBacklog): FairShare | undefined {
  if (depths.length === 0 || !(slots > 0) || !(meanCallMs > 0) || !(maxWaitMs > 0)) return undefined;
  const starts = Math.floor((slots * maxWaitMs) / meanCallMs);
  let total = 0;
  for (const d of depths) total += d;
  if (total <= starts) return undefined;
  // The level: the largest cap with sum(min(depth, cap)) <= starts. Over the depths in order, each
  // flow below the level takes its whole depth, and the rest share what is left alike.
  const sorted = [...depths].sort((a, b) => a - b);
  const rate = (slots * 1000) / (meanCallMs * depths.length);
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const level = Math.floor((starts - below) / (sorted.length - i));
    if (level < sorted[i]!) return { cap: Math.max(1, level), rate };
    below += sorted[i]!;
  }
  return undefined;
}

export function encodeReport(share: FairShare): string {
  return `${share.cap} ${share.rate}`;
}

/** The highest level among the dispatchers' reports; reports that do not parse are ignored. */
export function bestReport(values: readonly string[]): FairShare | undefined {
  let best: FairShare | undefined;
  for (const v of values) {
    const [cap, rate] = v.split(' ').map(Number);
    if (!Number.isInteger(cap) || cap! < 1 || !Number.isFinite(rate) || !(rate! > 0)) continue;
    if (!best || cap! > best.cap) best = { cap: cap!, rate: rate! };
  }
  return best;
}

/** When a LiteTopic holding `queued` would have a place within the level again: one round per request past it. */
export function fairShareRetryMs(queued: number, { cap, rate }: FairShare): number {
  return Math.ceil((Math.max(1, queued + 1 - cap) * 1000) / rate);
}
