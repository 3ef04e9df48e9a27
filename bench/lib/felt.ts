/**
 * Figures users feel, per tier, from one run's attempts: whether their request was
 * served in the end, whether it started soon enough to matter (goodput: started on
 * the GPU within the tier's maximum wait of its first send, resends included), how
 * long it waited, how long the whole thing took and, for streams, how long until the
 * first token reached them. Measured the same way for every system, so Sluice and
 * each baseline sit in one table.
 */
import { isOk, percentiles, round, type Attempt, type Percentiles } from './recorder.js';

export interface FeltFigures {
  readonly requests: number;
  /** Requests whose last attempt was served / requests. */
  readonly success: number;
  /** Requests served and started within the tier's maximum wait of their first send / requests. */
  readonly goodput: number;
  /**
   * First send to the start on the GPU (resends and their backoff included), over every
   * request: one never served never started, so it counts as an endless wait (Infinity;
   * null in JSON). A system cannot look fast by refusing the slow ones.
   */
  readonly waitMs: Percentiles;
  /** First send to the answer, over every request; one never served counts as endless. */
  readonly endToEndMs: Percentiles;
  /**
   * First send to the first generated text reaching the client, over the streamed requests
   * (resends included, as for the wait); one never served counts as endless. null: the
   * tier sent no streams.
   */
  readonly ttftMs: Percentiles | null;
  /**
   * Of the requests never served, first send to their last answer (a refusal, an expiry, or the
   * client giving up): how long a user waited to learn it will not be served. One never answered
   * counts as endless. null: none was refused.
   */
  readonly refusedAfterMs: Percentiles | null;
}

interface RequestRecord {
  readonly tier: string;
  readonly stream: boolean;
  readonly firstSentAt: number;
  readonly last: Attempt;
}

function requests(attempts: readonly Attempt[]): RequestRecord[] {
  const byRequest = new Map<number, { tier: string; stream: boolean; firstSentAt: number; last: Attempt }>();
  // Attempts are recorded in send order: the first seen is the first send, the last one decides.
  for (const a of attempts) {
    const r = byRequest.get(a.request);
    if (r) r.last = a;
    else byRequest.set(a.request, { tier: a.tier, stream: a.stream === true, firstSentAt: a.sentAt, last: a });
  }
  return [...byRequest.values()];
}

/** A request's wait: first send to its start on the GPU, Infinity unless its last attempt was served. */
export function waitBeforeGpuMs(firstSentAt: number, last: Attempt): number {
  return last.status !== undefined && isOk(last.status) && last.startedAt !== undefined
    ? last.startedAt - firstSentAt
    : Infinity;
}

function figures(list: readonly RequestRecord[], maxWaitMs: (tier: string) => number): FeltFigures {
  const served = list.filter((r) => r.last.status !== undefined && isOk(r.last.status));
  const servedSet = new Set(served);
  const refused = list.filter((r) => !servedSet.has(r));
  const waits = list.map((r) => waitBeforeGpuMs(r.firstSentAt, r.last));
  const good = list.filter((r, i) => Number.isFinite(waits[i]!) && waits[i]! <= maxWaitMs(r.tier));
  // A served stream whose text never reached the client did not give its user a first token either.
  const streams = list.filter((r) => r.stream);
  const ttft = (r: RequestRecord) =>
    servedSet.has(r) && r.last.firstTokenAt !== undefined ? r.last.firstTokenAt - r.firstSentAt : Infinity;
  return {
    requests: list.length,
    success: list.length ? round(served.length / list.length, 4) : 1,
    goodput: list.length ? round(good.length / list.length, 4) : 1,
    waitMs: percentiles(waits),
    endToEndMs: percentiles(list.map((r) => (servedSet.has(r) ? r.last.answeredAt! - r.firstSentAt : Infinity))),
    ttftMs: streams.length ? percentiles(streams.map(ttft)) : null,
    refusedAfterMs: refused.length
      ? percentiles(
          refused.map((r) => (r.last.answeredAt === undefined ? Infinity : r.last.answeredAt - r.firstSentAt)),
        )
      : null,
  };
}

/** Per tier (in the order given) and over all tiers; `maxWaitMs` is the tier's maximum wait in the policy. */
export function feltFigures(
  attempts: readonly Attempt[],
  tiers: readonly string[],
  maxWaitMs: (tier: string) => number,
): { readonly tiers: Readonly<Record<string, FeltFigures>>; readonly total: FeltFigures } {
  const all = requests(attempts);
  return {
    tiers: Object.fromEntries(
      tiers.map((t) => [
        t,
        figures(
          all.filter((r) => r.tier === t),
          maxWaitMs,
        ),
      ]),
    ),
    total: figures(all, maxWaitMs),
  };
}
