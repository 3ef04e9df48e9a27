/**
 * The edge's copy of the dispatchers' fair-share reports (lib/limits/fair-share.ts), read
 * again at most every FAIR_SHARE_READ_EVERY_MS per model and tier: admission is the hot
 * path, and a report a second old says as much as a fresh one.
 */
import { bestReport, FAIR_SHARE_READ_EVERY_MS, FAIR_SHARE_TTL_MS, type FairShare } from '../limits/fair-share.js';
import type { AggregateOps } from '../store/aggregate.js';
import { fairShareKey } from '../store/keys.js';

export interface FairShareView {
  /** The level `tier`'s flows are filled to on `model`; undefined when no dispatcher says (nothing over-committed). */
  share(model: string, tier: string, now: number): Promise<FairShare | undefined>;
}

/** Model × tier pairs remembered at most; both come from the policy, so this is only a guard. */
const MAX_ENTRIES = 4096;

interface Entry {
  readAt: number;
  share: FairShare | undefined;
  reading?: Promise<FairShare | undefined>;
}

export function createFairShareView(store: Pick<AggregateOps, 'readMembers'>): FairShareView {
  const entries = new Map<string, Entry>();
  return {
    share(model, tier, now) {
      const key = fairShareKey(model, tier);
      let entry = entries.get(key);
      if (entry && now - entry.readAt < FAIR_SHARE_READ_EVERY_MS) return Promise.resolve(entry.share);
      if (entry?.reading) return entry.reading;
      if (!entry) {
        if (entries.size >= MAX_ENTRIES) entries.clear();
        entries.set(key, (entry = { readAt: -Infinity, share: undefined }));
      }
      const e = entry;
      e.reading = store
        .readMembers(key, FAIR_SHARE_TTL_MS)
        .then((members) => bestReport(members.map((m) => m.value)))
        // Unknown rather than refused: a store that does not answer leaves the reservoir as it was.
        .catch(() => undefined)
        .then((share) => {
          Object.assign(e, { readAt: now, share, reading: undefined });
          return share;
        });
      return e.reading;
    },
  };
}
