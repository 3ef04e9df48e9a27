/**
 * Store operations behind the deployment-wide view (lib/telemetry/aggregate): bounded
 * hashes of counters, a registry of live members (instances), and bounded hashes of
 * lines (request traces). Every key expires, and no hash or value outgrows the cap its
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

export interface LineAppend {
  readonly key: string;
  /** The key's time to live, refreshed by every append. */
  readonly ttlMs: number;
  /** Fields the hash may hold, counted as for counters (one place stays for the overflow, unused here). */
  readonly maxFields: number;
  /** UTF-8 bytes one field's value may hold, separators included. */
  readonly maxBytes: number;
  /** Lines to append to fields; a line holds no newline (it is the separator). */
  readonly lines: readonly (readonly [field: string, line: string])[];
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
  /**
   * Appends lines to fields of capped hashes. A new field in a full hash is not written, and a
   * field past `maxBytes` keeps its first line and its latest (applyLines): nothing outgrows the caps.
   */
  appendLines(adds: readonly LineAppend[]): Promise<void>;
  /** One field's lines in each hash at `keys`, in order; a missing key or field reads as no lines. */
  readLines(keys: readonly string[], field: string): Promise<string[][]>;
}

/** Whether a field may be written: it exists, or the hash has room beside the overflow's place. */
export function hasPlace(hash: ReadonlyMap<string, unknown>, field: string, maxFields: number): boolean {
  return hash.has(field) || hash.size < Math.max(1, maxFields) - 1;
}

/** The field an increment lands in: its own while it has a place, else the overflow. */
export function fieldFor(hash: ReadonlyMap<string, number>, field: string, maxFields: number): string {
  return hasPlace(hash, field, maxFields) ? field : OVERFLOW_FIELD;
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

const utf8 = new TextEncoder();

/**
 * Applies one appendLines add to a hash in place (the embedded store's rule, and the script's).
 * A field keeps its first line and its latest lines: when a line does not fit, the lines after
 * the first are dropped, oldest first, until it does (or only the first is left, and it is dropped).
 */
export function applyLines(hash: Map<string, string>, add: Pick<LineAppend, 'maxFields' | 'maxBytes' | 'lines'>): void {
  for (const [field, line] of add.lines) {
    if (line.length === 0 || line.includes('\n')) continue;
    const old = hash.get(field);
    if (old === undefined && !hasPlace(hash, field, add.maxFields)) continue;
    const kept = old === undefined ? [line] : [...old.split('\n'), line];
    const sizes = kept.map((l) => utf8.encode(l).byteLength);
    let bytes = sizes.reduce((a, b) => a + b, 0) + kept.length - 1;
    while (bytes > add.maxBytes && kept.length > 2) {
      bytes -= sizes.splice(1, 1)[0]! + 1;
      kept.splice(1, 1);
    }
    if (bytes <= add.maxBytes) hash.set(field, kept.join('\n'));
  }
}

/** A stored value back into its lines. */
export function splitLines(value: string | undefined): string[] {
  return value ? value.split('\n') : [];
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
