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
 * The level also answers what was admitted before it: a flood's first seconds fill the
 * LiteTopics before any dispatcher sees the tier over-committed. A request queued there has
 * less time left than a newcomer, so while a level stands the dispatchers read when each place
 * of a LiteTopic lapses, keep those the flow's share reaches within their own time left
 * (latePlaces), take the rest from the reservoir and answer them at once, as the edge answers a
 * newcomer past the level; their messages, delivered later, are acked unserved.
 *
 * Both sides import this module: the key (lib/store/keys.ts fairShareKey), the encoding,
 * the rules.
 */

/** A report is forgotten after this long; a dispatcher with waiters reports every REPORT_EVERY_MS. */
export const FAIR_SHARE_TTL_MS = 5_000;
export const REPORT_EVERY_MS = 1_000;
/** Dispatchers remembered per model and tier; the least recent go first. */
export const MAX_REPORTERS = 64;
/** A queued place is shed only if it would not start in time even with this much more time left (latePlaces). */
export const SHED_MARGIN = 1.25;
/**
 * Places a dispatcher reads from one reservoir per report at most, the first to lapse: deeper
 * ones are judged once the late among these are gone.
 */
export const SHED_READS_PER_RESERVOIR = 1_024;
/** Reservoirs a dispatcher checks for places past the level per report at most, the deepest first. */
export const SHED_CHECKS_PER_REPORT = 32;
/** The reason a refusal at the level gives (x-sluice-reason), at admission and for a place shed. */
export const FAIR_SHARE_REASON = 'fair-share';
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
  const level = levelOf(
    [...depths].sort((a, b) => a - b),
    starts,
  );
  if (level === Infinity) return undefined;
  return { cap: Math.max(1, level), rate: (slots * 1000) / (meanCallMs * depths.length) };
}

/**
 * The level `starts` fill flows of these depths (sorted, least first) to: the largest cap with the
 * sum over flows of min(depth, cap) within the starts; Infinity when every flow fits whole. Each
 * flow below the level takes its whole depth, and the rest share what is left alike.
 */
function levelOf(sorted: readonly number[], starts: number): number {
  let below = 0;
  for (let i = 0; i < sorted.length; i++) {
    const level = Math.floor((starts - below) / (sorted.length - i));
    if (level < sorted[i]!) return level;
    below += sorted[i]!;
  }
  return Infinity;
}

/**
 * Of a LiteTopic's places, by when each lapses (its deadline), first first: the indexes of those
 * its flow's share of the model's starts does not reach in time. A place starts once the flow's
 * share reaches it: the one with k places kept ahead of it needs the level within its own time
 * left to pass k, less the flow's calls `running` (its first places, started already; a
 * dispatcher counts its own). A late place is not kept, so the ones behind it move up. The time
 * left is stretched by SHED_MARGIN, since what is shed is answered for good and the call times it
 * is judged by move. The head is never late here: the dispatcher judges it as it surfaces.
 */
export function latePlaces(lapses: readonly number[], now: number, backlog: TierBacklog, running = 0): number[] {
  const { depths, slots, meanCallMs } = backlog;
  if (depths.length === 0 || !(slots > 0) || !(meanCallMs > 0)) return [];
  const sorted = [...depths].sort((a, b) => a - b);
  const late: number[] = [];
  let kept = Math.min(1, lapses.length);
  for (let i = 1; i < lapses.length; i++) {
    const starts = Math.floor((slots * SHED_MARGIN * Math.max(0, lapses[i]! - now)) / meanCallMs);
    if (levelOf(sorted, starts) < kept + 1 - running) late.push(i);
    else kept++;
  }
  return late;
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

/** How fast a flow at the level starts, in words. */
function paceWords({ rate }: FairShare): string {
  const perMinute = rate * 60;
  return perMinute >= 1 ? `${Math.round(perMinute)} per minute` : `1 every ${Math.round(1 / perMinute)} minutes`;
}

/** The words for a request refused at admission (`queued`: what its LiteTopic holds). */
export function fairShareMessage(queued: number, share: FairShare, maxWaitMs: number, retryAfterMs: number): string {
  return (
    `This model is busy: it starts about ${paceWords(share)} of your requests, and the ${queued} already waiting ` +
    `fill what it can start within ${Math.round(maxWaitMs / 1000)} s. Retry after ${Math.ceil(retryAfterMs / 1000)} s.`
  );
}

/** The words for a request shed from its LiteTopic (`ahead`: the places kept ahead of it). */
export function shedMessage(ahead: number, share: FairShare, retryAfterMs: number): string {
  return (
    `This model is busy: it starts about ${paceWords(share)} of your requests, and the ${ahead} waiting ahead of this one ` +
    `fill what it can start before this request's deadline. Retry after ${Math.ceil(retryAfterMs / 1000)} s.`
  );
}
