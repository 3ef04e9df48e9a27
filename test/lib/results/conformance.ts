import { describe, expect, it } from 'vitest';
import type { ResultChannel, StoredResult } from '../../../lib/results/types.js';

let n = 0;
const newId = () => `req_conf_${Date.now()}_${n++}`;
const result = (id: string, status: StoredResult['status'] = 'completed'): StoredResult => ({
  id,
  tenant: 't',
  status,
  httpStatus: 200,
  body: { ok: id },
  completedAt: 1,
});

/** The same cases for every ResultChannel; time here is the wall clock. */
export function runResultChannelConformance(name: string, make: () => Promise<ResultChannel>) {
  describe(`ResultChannel conformance: ${name}`, () => {
    it('wait wakes when the result is stored, without polling', async () => {
      const ch = await make();
      const id = newId();
      const waiting = ch.wait(id, 5_000);
      await new Promise((r) => setTimeout(r, 50));
      await ch.complete(result(id));
      expect(await waiting).toEqual(result(id));
      await ch.close();
    });

    it('wait returns a result stored before it started (no race between store and subscribe)', async () => {
      const ch = await make();
      const id = newId();
      await ch.complete(result(id));
      expect(await ch.wait(id, 1_000)).toEqual(result(id));
      await ch.close();
    });

    it('wait gives up after its timeout and on abort', async () => {
      const ch = await make();
      const started = Date.now();
      expect(await ch.wait(newId(), 200)).toBeUndefined();
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      const abort = new AbortController();
      const waiting = ch.wait(newId(), 10_000, abort.signal);
      setTimeout(() => abort.abort(), 50);
      expect(await waiting).toBeUndefined();
      await ch.close();
    });

    it('the first final result stands; a result of an earlier life of the request is replaced', async () => {
      const ch = await make();
      const id = newId();
      await ch.track(id, 't');
      expect(await ch.complete({ ...result(id), completedAt: 100 }, 50)).toBe(true);
      expect(await ch.complete({ ...result(id, 'expired'), completedAt: 200 }, 50)).toBe(false);
      expect(await ch.get(id)).toMatchObject({ status: 'completed', completedAt: 100 });
      // Accepted again after that answer (an operator's dead-letter redrive): the new answer replaces it.
      expect(await ch.complete({ ...result(id, 'failed'), completedAt: 300 }, 150)).toBe(true);
      expect(await ch.get(id)).toMatchObject({ status: 'failed', completedAt: 300 });
      await ch.close();
    });

    it('track shows a pending record for its tenant until the result replaces it', async () => {
      const ch = await make();
      const id = newId();
      await ch.track(id, 't');
      expect(await ch.get(id)).toEqual({ id, tenant: 't', status: 'queued' });
      await ch.complete(result(id, 'failed'));
      expect((await ch.get(id))?.status).toBe('failed');
      expect(await ch.get(newId())).toBeUndefined();
      await ch.close();
    });

    it('chunks arrive in order, then end once the result is stored', async () => {
      const ch = await make();
      const id = newId();
      const got: string[] = [];
      const reading = (async () => {
        for await (const c of ch.chunks(id, 5_000)) got.push(c);
      })();
      for (let i = 0; i < 20; i++) await ch.appendChunk(id, JSON.stringify({ i }));
      await ch.complete(result(id));
      await reading;
      expect(got).toEqual(Array.from({ length: 20 }, (_, i) => JSON.stringify({ i })));
      await ch.close();
    });

    it('chunks written before the reader started are not lost', async () => {
      const ch = await make();
      const id = newId();
      await ch.appendChunk(id, '"a"');
      await ch.appendChunk(id, '"b"');
      await ch.complete(result(id));
      const got: string[] = [];
      for await (const c of ch.chunks(id, 1_000)) got.push(c);
      expect(got).toEqual(['"a"', '"b"']);
      await ch.close();
    });
  });
}
