/**
 * Store operations behind the deployment-wide view (lib/telemetry/aggregate): bounded
 * hashes of counters, a registry of live members (instances), and short capped logs
 * (request traces). Every key expires, and no hash or list outgrows the cap its
 * writer gives, so the store's memory has a bound whatever tenants and ids arrive.
 * The rules are written once here; lib/store/redis/aggregate.ts is their Lua twin.
 */

/** Where increments to a field that does not fit a full hash go. */
export const OVERFLOW_FIELD = '~overflow';

export interface CounterAdd {
  readonly key: string;
  /** The key's time to live, refreshed by every add. */
  readonly ttlMs: number;
  /** Fields the hash may hold, OVERFLOW_FIELD included. */
  readonly maxFields: number;
  readonly counts: readonly (readonly [field: string, delta: number])[];
}

export interface Member {
  readonly id: string;
  readonly value: string;
}

export interface AggregateOps {
  /** Adds to counter hashes; a field falling to zero or below is removed (up-and-down gauges). */
  addCounts(adds: readonly CounterAdd[]): Promise<void>;
  /** The hashes at `keys`, in order; a missing key reads as empty. */
  readCounts(keys: readonly string[]): Promise<ReadonlyMap<string, number>[]>;
  /** Sets one member's latest value; members silent for `ttlMs` are dropped, and the oldest beyond `max`. */
  putMember(index: string, id: string, value: string, ttlMs: number, max: number): Promise<void>;
  /** Members heard from within `ttlMs`, most recent first. */
  readMembers(index: string, ttlMs: number): Promise<Member[]>;
  /** Appends to a log that keeps its last `maxLen` entries and expires `ttlMs` after the last append. */
  appendLog(key: string, entries: readonly string[], maxLen: number, ttlMs: number): Promise<void>;
  readLog(key: string): Promise<string[]>;
}

/** The field an increment lands in: its own while it exists or the hash has room, else the overflow. */
export function fieldFor(hash: ReadonlyMap<string, number>, field: string, maxFields: number): string {
  if (hash.has(field) || hash.size < Math.max(1, maxFields) - 1) return field;
  return OVERFLOW_FIELD;
}

/** Applies one add to a hash in place (the embedded store's rule, and the script's). */
export function applyCounts(hash: Map<string, number>, add: Pick<CounterAdd, 'maxFields' | 'counts'>): void {
  for (const [field, delta] of add.counts) {
    if (!Number.isFinite(delta) || delta === 0) continue;
    const target = fieldFor(hash, field, add.maxFields);
    const next = (hash.get(target) ?? 0) + Math.trunc(delta);
    if (next <= 0) hash.delete(target);
    else hash.set(target, next);
  }
}

export interface MemberEntry {
  value: string;
  seen: number;
}

/** Applies one putMember to a registry in place: drop the silent, set, then keep the `max` most recent. */
export function putMemberRule(
  members: Map<string, MemberEntry>,
  id: string,
  value: string,
  now: number,
  ttlMs: number,
  max: number,
): void {
  for (const [k, m] of members) if (m.seen <= now - ttlMs) members.delete(k);
  members.delete(id);
  members.set(id, { value, seen: now });
  // Map order is insertion order, and a put re-inserts: the first entries are the least recent.
  for (const k of members.keys()) {
    if (members.size <= Math.max(1, max)) break;
    members.delete(k);
  }
}

export function readMembersRule(members: ReadonlyMap<string, MemberEntry>, now: number, ttlMs: number): Member[] {
  return [...members]
    .filter(([, m]) => m.seen > now - ttlMs)
    .sort((a, b) => b[1].seen - a[1].seen || (a[0] < b[0] ? 1 : -1))
    .map(([id, m]) => ({ id, value: m.value }));
}
