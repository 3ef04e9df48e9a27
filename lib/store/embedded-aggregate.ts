/**
 * The aggregate operations over Maps, for the embedded store: the rules of
 * lib/store/aggregate.ts with expiry kept per key and swept as keys are written.
 */
import type { Clock } from '../clock/clock.js';
import { applyCounts, applyLines, putMemberRule, readMembersRule, splitLines } from './aggregate.js';
import type { AggregateOps, MemberEntry } from './aggregate.js';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

/** Writes between sweeps of expired keys. */
const SWEEP_EVERY = 1024;

export function createEmbeddedAggregate(clock: Clock): AggregateOps {
  const hashes = new Map<string, Expiring<Map<string, number>>>();
  const registries = new Map<string, Expiring<Map<string, MemberEntry>>>();
  const lines = new Map<string, Expiring<Map<string, string>>>();
  let writes = 0;

  function live<T>(map: Map<string, Expiring<T>>, key: string, now: number): T | undefined {
    const e = map.get(key);
    if (e && e.expiresAt <= now) map.delete(key);
    return e && e.expiresAt > now ? e.value : undefined;
  }

  function wrote(now: number): void {
    if (++writes % SWEEP_EVERY !== 0) return;
    for (const map of [hashes, registries, lines] as Map<string, Expiring<unknown>>[]) {
      for (const [k, e] of map) if (e.expiresAt <= now) map.delete(k);
    }
  }

  return {
    async addCounts(adds) {
      const now = clock.now();
      for (const add of adds) {
        const hash = live(hashes, add.key, now) ?? new Map<string, number>();
        applyCounts(hash, add);
        if (hash.size > 0) hashes.set(add.key, { value: hash, expiresAt: now + Math.max(1, Math.ceil(add.ttlMs)) });
        else hashes.delete(add.key);
        wrote(now);
      }
    },
    async readCounts(keys) {
      const now = clock.now();
      return keys.map((k) => new Map(live(hashes, k, now) ?? []));
    },
    async putMember(index, id, value, ttlMs, max) {
      const now = clock.now();
      const members = live(registries, index, now) ?? new Map<string, MemberEntry>();
      putMemberRule(members, id, value, now, ttlMs, max);
      registries.set(index, { value: members, expiresAt: now + Math.ceil(ttlMs) });
      wrote(now);
    },
    async readMembers(index, ttlMs) {
      const now = clock.now();
      return readMembersRule(live(registries, index, now) ?? new Map(), now, ttlMs);
    },
    async appendLines(adds) {
      const now = clock.now();
      for (const add of adds) {
        const hash = live(lines, add.key, now) ?? new Map<string, string>();
        applyLines(hash, add);
        if (hash.size > 0) lines.set(add.key, { value: hash, expiresAt: now + Math.max(1, Math.ceil(add.ttlMs)) });
        wrote(now);
      }
    },
    async readLines(keys, field) {
      const now = clock.now();
      return keys.map((k) => splitLines(live(lines, k, now)?.get(field)));
    },
  };
}
