/**
 * The aggregate operations' cases (lib/store/aggregate.ts), run by the RateStore
 * conformance suite on every store: the same inputs, the same contents.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../lib/clock/clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { OVERFLOW_FIELD } from '../../../lib/store/aggregate.js';
import type { RateStore } from '../../../lib/store/types.js';

const uid = () => randomUUID().slice(0, 8);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const key = (what: string) => `sluice:{agg}:test:${what}:${uid()}`;

export function runAggregateConformance(open: (clock: Clock | undefined) => Promise<RateStore>): void {
  describe('aggregate operations', () => {
    it('adds counters, folds fields past the cap into the overflow, and drops fields at zero', async () => {
      const store = await open(new VirtualClock(0));
      const k = key('counts');
      await store.addCounts([
        {
          key: k,
          ttlMs: 60_000,
          maxFields: 3,
          counts: [
            ['a', 2],
            ['b', 1],
          ],
        },
      ]);
      await store.addCounts([
        {
          key: k,
          ttlMs: 60_000,
          maxFields: 3,
          counts: [
            ['c', 5],
            ['a', 1],
            ['d', 1],
          ],
        },
      ]);
      const [hash] = await store.readCounts([k]);
      expect(Object.fromEntries(hash!)).toEqual({ a: 3, b: 1, [OVERFLOW_FIELD]: 6 });
      await store.addCounts([
        {
          key: k,
          ttlMs: 60_000,
          maxFields: 3,
          counts: [
            ['b', -1],
            ['a', -5],
          ],
        },
      ]);
      const [after, missing] = await store.readCounts([k, key('none')]);
      expect(Object.fromEntries(after!)).toEqual({ [OVERFLOW_FIELD]: 6 });
      expect(missing!.size).toBe(0);
      // A freed place is taken by the next new field; the overflow holds one of the places.
      await store.addCounts([
        {
          key: k,
          ttlMs: 60_000,
          maxFields: 3,
          counts: [
            ['e', 1],
            ['f', 1],
            ['g', 1],
          ],
        },
      ]);
      expect(Object.fromEntries((await store.readCounts([k]))[0]!)).toEqual({ e: 1, [OVERFLOW_FIELD]: 8 });
    });

    it('adds to several hashes in one call, each with its own cap, and ignores zero deltas', async () => {
      const store = await open(new VirtualClock(0));
      const [k1, k2] = [key('one'), key('two')];
      await store.addCounts([
        {
          key: k1,
          ttlMs: 60_000,
          maxFields: 10,
          counts: [
            ['x|y', 1],
            ['zero', 0],
          ],
        },
        {
          key: k2,
          ttlMs: 60_000,
          maxFields: 1,
          counts: [
            ['p', 2],
            ['q', 3],
          ],
        },
        { key: key('empty'), ttlMs: 60_000, maxFields: 1, counts: [] },
      ]);
      const [h1, h2] = await store.readCounts([k1, k2]);
      expect(Object.fromEntries(h1!)).toEqual({ 'x|y': 1 });
      expect(Object.fromEntries(h2!)).toEqual({ [OVERFLOW_FIELD]: 5 });
      await store.addCounts([]);
      expect(await store.readCounts([])).toEqual([]);
    });

    it('keeps the members heard from recently, most recent first, at most max', async () => {
      const clock = new VirtualClock(10_000);
      const store = await open(clock);
      const index = key('members');
      await store.putMember(index, 'edge-1', '{"role":"edge"}', 5_000, 2);
      await clock.advance(1_000);
      await store.putMember(index, 'disp-1', 'd', 5_000, 2);
      expect(await store.readMembers(index, 5_000)).toEqual([
        { id: 'disp-1', value: 'd' },
        { id: 'edge-1', value: '{"role":"edge"}' },
      ]);
      await clock.advance(1_000);
      await store.putMember(index, 'edge-2', 'e2', 5_000, 2);
      // The least recent went to make room.
      expect((await store.readMembers(index, 5_000)).map((m) => m.id)).toEqual(['edge-2', 'disp-1']);
      await clock.advance(1_000);
      await store.putMember(index, 'disp-1', 'd2', 5_000, 2);
      expect(await store.readMembers(index, 5_000)).toEqual([
        { id: 'disp-1', value: 'd2' },
        { id: 'edge-2', value: 'e2' },
      ]);
      // Silent for the TTL: gone from reads.
      await clock.advance(4_500);
      expect((await store.readMembers(index, 5_000)).map((m) => m.id)).toEqual(['disp-1']);
    });

    it('appends lines to fields, traces no new field in a full hash, and caps each value in UTF-8 bytes', async () => {
      const store = await open(new VirtualClock(0));
      const [k1, k2, k3] = [key('lines'), key('lines-none'), key('lines-small')];
      const lines = (k: string, maxFields: number, maxBytes: number, l: [string, string][]) => ({
        key: k,
        ttlMs: 60_000,
        maxFields,
        maxBytes,
        lines: l,
      });
      await store.appendLines([
        // Three fields hold two ids (one place stays for the overflow, as for counters).
        lines(k1, 3, 10, [
          ['a', 'x1'],
          ['b', 'y1'],
          ['a', 'x2'],
          ['c', 'z1'],
          ['b', ''],
          ['b', 'two\nlines'],
        ]),
        lines(k2, 1, 10, [['a', 'x']]),
        lines(k3, 10, 3, [
          ['p', 'long'],
          ['p', 'ok'],
        ]),
        lines(key('lines-empty'), 10, 10, []),
      ]);
      // A full value keeps its first line and its latest: x4 (11 bytes in all) pushes x2 out. Sizes are
      // UTF-8 bytes: '€€€' (12 bytes with y1, 6 UTF-16 units) does not fit beside the first line, 'é€' does,
      // and 'ab' pushes it out (11 bytes, 8 UTF-16 units).
      const more: [string, string][] = [
        ['a', 'x3'],
        ['a', 'x4'],
        ['b', '€€€'],
        ['b', 'é€'],
        ['c', 'z2'],
      ];
      await store.appendLines([lines(k1, 3, 10, more)]);
      expect(await store.readLines([k1], 'b')).toEqual([['y1', 'é€']]);
      await store.appendLines([lines(k1, 3, 10, [['b', 'ab']])]);
      expect(await store.readLines([k1, k2, k3, key('none')], 'a')).toEqual([['x1', 'x3', 'x4'], [], [], []]);
      expect(await store.readLines([k1], 'b')).toEqual([['y1', 'ab']]);
      expect(await store.readLines([k1], 'c')).toEqual([[]]);
      expect(await store.readLines([k3], 'p')).toEqual([['ok']]);
      expect(await store.readLines([], 'a')).toEqual([]);
      await store.appendLines([]);
    });

    it('forgets counters and lines once their TTL has passed (real time)', async () => {
      const store = await open(undefined);
      const [c, l] = [key('ttl-counts'), key('ttl-lines')];
      await store.addCounts([{ key: c, ttlMs: 60, maxFields: 4, counts: [['a', 1]] }]);
      await store.appendLines([{ key: l, ttlMs: 60, maxFields: 4, maxBytes: 64, lines: [['f', 'x']] }]);
      expect(await store.readLines([l], 'f')).toEqual([['x']]);
      expect((await store.readCounts([c]))[0]!.get('a')).toBe(1);
      await sleep(120);
      expect((await store.readCounts([c]))[0]!.size).toBe(0);
      expect(await store.readLines([l], 'f')).toEqual([[]]);
    });
  });
}
