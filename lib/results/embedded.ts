/**
 * The in-process result channel: results and stream chunks in Maps, waiters woken
 * directly. Entries live for `ttlMs` after completion so async clients can read them.
 */
import type { Clock } from '../clock/clock.js';
import type { PendingRecord, ResultChannel, StoredResult } from './types.js';

export interface EmbeddedResultsOptions {
  readonly clock: Clock;
  readonly ttlMs?: number;
}

interface Entry {
  result?: StoredResult;
  pending?: PendingRecord;
  chunks: string[];
  /** Called on every change: a new chunk or the result. */
  listeners: Set<() => void>;
  expiresAt: number;
}

export function createEmbeddedResults(options: EmbeddedResultsOptions): ResultChannel {
  const { clock } = options;
  const ttlMs = options.ttlMs ?? 60 * 60_000;
  const entries = new Map<string, Entry>();
  let writes = 0;

  function entry(id: string): Entry {
    let e = entries.get(id);
    if (!e) entries.set(id, (e = { chunks: [], listeners: new Set(), expiresAt: clock.now() + ttlMs }));
    return e;
  }

  function sweep(): void {
    const now = clock.now();
    // Map order is insertion order, so the oldest entries come first.
    for (const [id, e] of entries) {
      if (e.expiresAt > now) break;
      if (e.listeners.size === 0) entries.delete(id);
    }
  }

  function notify(e: Entry): void {
    for (const listener of [...e.listeners]) listener();
  }

  /** Resolves on the next change of the entry, or false on timeout/abort. */
  function nextChange(e: Entry, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (changed: boolean) => {
        e.listeners.delete(onChange);
        cancel();
        signal?.removeEventListener('abort', onAbort);
        resolve(changed);
      };
      const onChange = () => done(true);
      const onAbort = () => done(false);
      const cancel = clock.setTimer(timeoutMs, () => done(false));
      e.listeners.add(onChange);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) done(false);
    });
  }

  return {
    async track(id, tenant) {
      if (++writes % 1024 === 0) sweep();
      entry(id).pending = { id, tenant, status: 'queued' };
    },

    async complete(result, acceptedAt = -Infinity) {
      if (++writes % 1024 === 0) sweep();
      const e = entry(result.id);
      if (e.result && e.result.completedAt >= acceptedAt) return false;
      e.result = result;
      e.expiresAt = clock.now() + ttlMs;
      notify(e);
      return true;
    },

    async appendChunk(id, data) {
      const e = entry(id);
      e.chunks.push(data);
      notify(e);
    },

    async get(id) {
      const e = entries.get(id);
      return e?.result ?? e?.pending;
    },

    async wait(id, timeoutMs, signal) {
      const e = entry(id);
      const deadline = clock.now() + timeoutMs;
      while (!e.result) {
        const left = deadline - clock.now();
        if (left <= 0 || signal?.aborted) return undefined;
        if (!(await nextChange(e, left, signal)) && !e.result) return undefined;
      }
      return e.result;
    },

    async *chunks(id, idleTimeoutMs, signal) {
      const e = entry(id);
      let next = 0;
      for (;;) {
        while (next < e.chunks.length) yield e.chunks[next++]!;
        if (e.result || signal?.aborted) return;
        if (!(await nextChange(e, idleTimeoutMs, signal))) return;
      }
    },

    async close() {
      entries.clear();
    },
  };
}
