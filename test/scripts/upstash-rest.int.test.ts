/**
 * The local Upstash-REST server is only useful if clients nobody here wrote
 * behave against it exactly as against Upstash: @upstash/redis (both response
 * encodings, auto-pipelining, transactions, scripts, pub/sub) and
 * @upstash/ratelimit's three single-region algorithms.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Ratelimit } from '@upstash/ratelimit';
import { Redis } from '@upstash/redis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { attachRedisServer } from '../../scripts/redis/server.ts';

const url = inject('upstashUrl');
const token = inject('upstashToken');

function client(opts: { base64?: boolean; autoPipeline?: boolean; token?: string } = {}): Redis {
  return new Redis({
    url,
    token: opts.token ?? token,
    responseEncoding: opts.base64 === false ? false : 'base64',
    enableAutoPipelining: opts.autoPipeline ?? true,
    enableTelemetry: false,
    retry: false,
  });
}

async function raw(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const uid = () => randomUUID().slice(0, 8);
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

describe.each([
  { name: 'base64 on, auto-pipelining', base64: true, autoPipeline: true },
  { name: 'base64 on, direct', base64: true, autoPipeline: false },
  { name: 'base64 off, direct', base64: false, autoPipeline: false },
  { name: 'base64 off, auto-pipelining', base64: false, autoPipeline: true },
])('@upstash/redis, $name', ({ base64, autoPipeline }) => {
  const redis = client({ base64, autoPipeline });

  it('get/set/incr round-trip strings, unicode, numbers and nil', async () => {
    const k = `t:${uid()}`;
    expect(await redis.set(k, 'héllo wörld ✓', { ex: 30 })).toBe('OK');
    expect(await redis.get(k)).toBe('héllo wörld ✓');
    expect(await redis.get(`${k}:missing`)).toBeNull();
    expect(await redis.incr(`${k}:n`)).toBe(1);
    expect(await redis.incrby(`${k}:n`, 41)).toBe(42);
    await redis.set(`${k}:obj`, { a: 1, b: ['x'] });
    expect(await redis.get(`${k}:obj`)).toEqual({ a: 1, b: ['x'] });
    expect(await redis.ttl(k)).toBeGreaterThan(0);
  });

  it('returns nested arrays and hashes', async () => {
    const k = `t:${uid()}`;
    await redis.hset(k, { f1: 'v1', f2: 7 });
    expect(await redis.hgetall(k)).toEqual({ f1: 'v1', f2: 7 });
    await redis.rpush(`${k}:l`, 'a', 'b', 'c');
    expect(await redis.lrange(`${k}:l`, 0, -1)).toEqual(['a', 'b', 'c']);
    await redis.zadd(`${k}:z`, { score: 1, member: 'm1' }, { score: 2, member: 'm2' });
    expect(await redis.zrange(`${k}:z`, 0, -1, { withScores: true })).toEqual(['m1', 1, 'm2', 2]);
  });

  it('pipelines, keeping per-command errors in place', async () => {
    const k = `t:${uid()}`;
    const p = redis.pipeline();
    p.set(k, 'x');
    p.incr(`${k}:n`);
    p.incr(k);
    p.get(k);
    const out = await p.exec({ keepErrors: true });
    expect(out.map((r) => r.result)).toEqual(['OK', 1, undefined, 'x']);
    expect(out[2]!.error).toMatch(/not an integer/);
    const q = redis.pipeline();
    q.set(k, 'y');
    q.incr(k);
    await expect(q.exec()).rejects.toThrow(/Command 2 \[ incr \] failed: ERR value is not an integer/);
  });

  it('runs MULTI/EXEC transactions', async () => {
    const k = `t:${uid()}`;
    const tx = redis.multi();
    tx.set(k, 5);
    tx.incrby(k, 2);
    tx.get(k);
    expect(await tx.exec()).toEqual(['OK', 7, 7]);
  });

  it('throws Redis errors from single commands', async () => {
    const k = `t:${uid()}`;
    await redis.set(k, 'text');
    await expect(redis.incr(k)).rejects.toThrow(/ERR value is not an integer/);
  });

  it('runs EVAL and EVALSHA, falling back on NOSCRIPT', async () => {
    const k = `t:${uid()}`;
    const body = `return redis.call('INCRBY', KEYS[1], ARGV[1]) -- ${uid()}`;
    expect(await redis.eval(body, [k], [3])).toBe(3);
    expect(await redis.evalsha(sha1(body), [k], [4])).toBe(7);
    const script = redis.createScript<number>(`return redis.call('INCRBY', KEYS[1], ARGV[1]) -- ${uid()}`);
    expect(await script.exec([k], ['10'])).toBe(17);
    await expect(redis.evalsha(sha1(`never loaded ${uid()}`), [], [])).rejects.toThrow(/NOSCRIPT/);
  });

  it('strips the Upstash-only shebang and maps EVALSHA, SCRIPT LOAD and SCRIPT EXISTS hashes', async () => {
    const k = `t:${uid()}`;
    const text = `#!lua flags=allow-key-locking\n  return {redis.call('INCR', KEYS[1]), ARGV[1]} -- ${uid()}`;
    await expect(redis.evalsha(sha1(text), [k], ['a'])).rejects.toThrow(/NOSCRIPT/);
    expect(await redis.eval(text, [k], ['a'])).toEqual([1, 'a']);
    expect(await redis.evalsha(sha1(text), [k], ['b'])).toEqual([2, 'b']);
    const other = `#!lua flags=allow-key-locking\nreturn 'loaded-${uid()}'`;
    expect(await redis.scriptLoad(other)).toBe(sha1(other));
    expect((await redis.scriptExists(sha1(other), sha1(`nope ${uid()}`))) as unknown).toEqual([1, 0]);
    expect(await redis.evalsha(sha1(other), [], [])).toMatch(/^loaded-/);
  });

  it('refuses a wrong token with 401', async () => {
    await expect(client({ base64, autoPipeline, token: 'wrong' }).get('x')).rejects.toThrow(/Unauthorized/);
  });
});

describe('wire format', () => {
  it('answers single commands with {result} and Redis errors with 400 {error}', async () => {
    const k = `t:${uid()}`;
    expect(await raw('/', ['set', k, 'v'])).toEqual({ status: 200, body: { result: 'OK' } });
    expect(await raw('/', ['incr', k])).toEqual({
      status: 400,
      body: { error: 'ERR value is not an integer or out of range' },
    });
    expect(await raw('/', ['get', `${k}:none`])).toEqual({ status: 200, body: { result: null } });
  });

  it('base64-encodes every string, status replies included, but not numbers, nil or errors', async () => {
    const k = `t:${uid()}`;
    const b64 = { 'upstash-encoding': 'base64' };
    expect((await raw('/', ['set', k, 'v'], b64)).body).toEqual({ result: 'T0s=' });
    expect((await raw('/', ['get', k], b64)).body).toEqual({ result: Buffer.from('v').toString('base64') });
    expect(
      (
        await raw(
          '/pipeline',
          [
            ['incr', `${k}:n`],
            ['get', 'none'],
            ['incr', k],
            ['echo', 'é'],
          ],
          b64,
        )
      ).body,
    ).toEqual([
      { result: 1 },
      { result: null },
      { error: 'ERR value is not an integer or out of range' },
      { result: Buffer.from('é').toString('base64') },
    ]);
  });

  it('converts JSON numbers, booleans and null arguments to strings', async () => {
    const k = `t:${uid()}`;
    expect(
      (
        await raw('/pipeline', [
          ['set', k, 12.5],
          ['get', k],
          ['set', k, true],
          ['get', k],
          ['echo', null],
        ])
      ).body,
    ).toEqual([{ result: 'OK' }, { result: '12.5' }, { result: 'OK' }, { result: 'true' }, { result: 'null' }]);
  });

  it('answers an aborted transaction with a non-2xx {error} and executes none of it', async () => {
    const k = `t:${uid()}`;
    const res = await raw('/multi-exec', [['set', k, '1'], ['incr']]);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/EXECABORT/);
    expect((await raw('/', ['get', k])).body).toEqual({ result: null });
    const redis = client();
    const tx = redis.multi();
    tx.set(k, 1);
    tx.hset(k, {}); // HSET with no field: wrong arity, refused while queueing
    await expect(tx.exec()).rejects.toThrow(/EXECABORT/);
    expect((await raw('/', ['get', k])).body).toEqual({ result: null });
  });

  it('refuses blocking and connection-state commands instead of stalling the shared connection', async () => {
    for (const cmd of [
      ['blpop', 'x', '0'],
      ['multi'],
      ['subscribe', 'c'],
      ['select', '1'],
      ['xread', 'BLOCK', '0', 'STREAMS', 's', '$'],
    ]) {
      const res = await raw('/', cmd);
      expect(res.status, cmd.join(' ')).toBe(400);
      expect(res.body.error).toMatch(/not available/);
    }
  });

  it('requires the bearer token', async () => {
    const res = await fetch(`${url}/`, { method: 'POST', body: '["ping"]' });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Unauthorized' });
    expect((await raw('/', ['ping'], { authorization: 'Bearer nope' })).status).toBe(401);
  });

  it('accepts path-style commands', async () => {
    const k = `t:${uid()}`;
    const res = await fetch(`${url}/set/${k}/hello`, { headers: { authorization: `Bearer ${token}` } });
    expect(await res.json()).toEqual({ result: 'OK' });
    expect((await raw('/', ['get', k])).body).toEqual({ result: 'hello' });
  });
});

describe('subscribe over SSE', () => {
  it('delivers published messages to @upstash/redis subscribers', async () => {
    const redis = client();
    const channel = `ch:${uid()}`;
    const sub = redis.subscribe<{ n: number }>([channel]);
    const subscribed = new Promise<number>((resolve) => sub.on('subscribe', resolve));
    const got: unknown[] = [];
    const two = new Promise<void>((resolve) =>
      sub.on('message', (m) => {
        got.push(m.message);
        if (got.length === 2) resolve();
      }),
    );
    expect(await subscribed).toBe(1);
    expect(await redis.publish(channel, { n: 1 })).toBe(1);
    await redis.publish(channel, 'plain text, with commas');
    await two;
    expect(got).toEqual([{ n: 1 }, 'plain text, with commas']);
    await sub.unsubscribe();
    await new Promise((r) => setTimeout(r, 100));
    expect(await redis.publish(channel, 'after')).toBe(0);
  });
});

describe('@upstash/ratelimit against the local server', () => {
  const redis = client();
  // The limiter fails open on timeout; a denial can only come from the server's answer.
  const assertAnswered = (r: { reason?: string }) => expect(r.reason).toBeUndefined();

  it('fixedWindow allows the limit, then denies', async () => {
    const rl = new Ratelimit({
      redis,
      limiter: Ratelimit.fixedWindow(5, '10 s'),
      prefix: `rl:${uid()}`,
      analytics: false,
      ephemeralCache: false,
    });
    const results = [];
    for (let i = 0; i < 7; i++) results.push(await rl.limit('user'));
    results.forEach(assertAnswered);
    expect(results.map((r) => r.success)).toEqual([true, true, true, true, true, false, false]);
    expect(results[4]!.remaining).toBe(0);
    expect(results[0]!.remaining).toBe(4);
    expect((await rl.limit('other')).success).toBe(true);
    expect(await rl.getRemaining('user')).toMatchObject({ remaining: 0 });
  });

  it('slidingWindow allows the limit, then denies', async () => {
    const rl = new Ratelimit({
      redis,
      limiter: Ratelimit.slidingWindow(3, '10 s'),
      prefix: `rl:${uid()}`,
      analytics: false,
      ephemeralCache: false,
    });
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await rl.limit('user'));
    results.forEach(assertAnswered);
    expect(results.map((r) => r.success)).toEqual([true, true, true, false, false]);
  });

  it('tokenBucket spends the burst, denies, then refills', async () => {
    const rl = new Ratelimit({
      redis,
      limiter: Ratelimit.tokenBucket(1, '1 s', 3),
      prefix: `rl:${uid()}`,
      analytics: false,
      ephemeralCache: false,
    });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await rl.limit('user'));
    results.forEach(assertAnswered);
    expect(results.map((r) => r.success)).toEqual([true, true, true, false]);
    await new Promise((r) => setTimeout(r, 1100));
    expect((await rl.limit('user')).success).toBe(true);
  });

  it('charges a rate > 1 and refuses what does not fit', async () => {
    const rl = new Ratelimit({
      redis,
      limiter: Ratelimit.fixedWindow(10, '10 s'),
      prefix: `rl:${uid()}`,
      analytics: false,
      ephemeralCache: false,
    });
    expect((await rl.limit('u', { rate: 6 })).success).toBe(true);
    expect((await rl.limit('u', { rate: 6 })).success).toBe(false);
  });

  it('is unaffected by concurrency: exactly the limit passes out of many parallel calls', async () => {
    const rl = new Ratelimit({
      redis,
      limiter: Ratelimit.fixedWindow(20, '30 s'),
      prefix: `rl:${uid()}`,
      analytics: false,
      ephemeralCache: false,
    });
    const results = await Promise.all(Array.from({ length: 60 }, () => rl.limit('burst')));
    results.forEach(assertAnswered);
    expect(results.filter((r) => r.success)).toHaveLength(20);
  });
});

describe('Redis going away', () => {
  const server = attachRedisServer(inject('redisPort'), inject('redisDir'));
  afterAll(async () => {
    // Leave Redis up for the files that run after this one.
    if (
      !(await raw('/', ['ping']).then(
        (r) => r.status === 200,
        () => false,
      ))
    )
      await server.start();
  });

  it('answers 503 {error} while Redis is down and recovers by itself when it returns', async () => {
    expect((await raw('/', ['ping'])).body).toEqual({ result: 'PONG' });
    await server.stop();
    const down = await raw('/', ['ping']);
    expect(down.status).toBe(503);
    expect(down.body.error).toMatch(/redis/i);
    expect((await raw('/pipeline', [['ping']])).status).toBe(503);
    await server.start();
    const deadline = Date.now() + 5000;
    let last = down;
    while (Date.now() < deadline) {
      last = await raw('/', ['ping']);
      if (last.status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(last).toEqual({ status: 200, body: { result: 'PONG' } });
  });
});
