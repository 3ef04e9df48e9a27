import { describe, expect, it } from 'vitest';
import { runBaseline } from '../../bench/lib/baselines.js';
import { feltFigures } from '../../bench/lib/felt.js';
import { round, type Attempt } from '../../bench/lib/recorder.js';
import { createRng } from '../../bench/lib/rng.js';
import { readStreamAnswer } from '../../bench/lib/stream-answer.js';
import { runSluice, type SystemRun } from '../../bench/lib/systems.js';
import { burst, parseJsonlTrace, poisson, toJsonl } from '../../bench/lib/trace.js';
import { LAB_MODEL, worldStreams, type World } from '../../bench/lib/world.js';
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';

const maxWait = (t: string) => defaultTiers[t]!.maxQueueWaitMs;

// One slot, an idle GPU: a streamed realtime request (64 tokens, four decode steps of 16) and a
// plain batch one a second later, so neither waits for the other.
const world: World = {
  name: 'ttft',
  trace: [
    { t: 0, account: 'rt-1', model: LAB_MODEL, tokens: 64, stream: true },
    { t: 5_000, account: 'batch-1', model: LAB_MODEL, tokens: 64 },
  ],
  accounts: { 'rt-1': { tenant: 'r', tier: 'realtime' }, 'batch-1': { tenant: 'b', tier: 'batch' } },
  tiers: defaultTiers,
  defaults: defaultLimits,
  gpu: { slots: 1, baseTokenMs: 10, queueLimit: 1, maxQueueWaitMs: 5_000 },
  bucketMs: 1_000,
  drainMs: 60_000,
};

const streamed = (run: SystemRun) => run.recorder.attempts.find((a) => a.stream)!;

describe('time to first token, measured at the client', () => {
  it('a streamed request: its first chunk reaches the client after the GPU starts and before the answer ends', async () => {
    for (const run of [await runSluice(world), await runBaseline(world, 'fcfs')]) {
      const a = streamed(run);
      expect(a.status, run.system).toBe(200);
      expect(a.firstTokenAt, run.system).toBeDefined();
      expect(a.firstTokenAt!, run.system).toBeGreaterThan(a.startedAt!);
      expect(a.firstTokenAt!, run.system).toBeLessThan(a.answeredAt!);
      const felt = feltFigures(run.recorder.attempts, ['realtime', 'batch'], maxWait);
      const ttft = round(a.firstTokenAt! - a.sentAt);
      expect(felt.tiers.realtime!.ttftMs, run.system).toMatchObject({ n: 1, p50: ttft, p99: ttft });
      // The tier that sent no stream has no time to first token; the plain request got no stamp.
      expect(felt.tiers.batch!.ttftMs, run.system).toBeNull();
      expect(run.recorder.attempts.find((x) => !x.stream)!.firstTokenAt, run.system).toBeUndefined();
    }
  });

  it('Sluice and a baseline are measured alike: on an idle GPU, GPU start to first token at the client is the same', async () => {
    const sluice = streamed(await runSluice(world));
    const base = streamed(await runBaseline(world, 'priority'));
    // The first 16 tokens on a lone slot: the GPU part of TTFT, with nothing of either system's own added.
    expect(sluice.firstTokenAt! - sluice.startedAt!).toBe(base.firstTokenAt! - base.startedAt!);
    expect(sluice.firstTokenAt! - sluice.startedAt!).toBeGreaterThan(0);
    // What Sluice adds before the GPU (edge, queue, pacing) shows in its TTFT, not hidden from it.
    expect(sluice.firstTokenAt! - sluice.sentAt).toBe(
      sluice.startedAt! - sluice.sentAt + (base.firstTokenAt! - base.startedAt!),
    );
  });

  it('a streamed request never served counts as endless', async () => {
    // The shallow GPU queue holds one: of three streams sent at once the third is refused, and never resent.
    const crowd: World = {
      ...world,
      trace: [0, 0, 0].map((t) => ({ t, account: 'rt-1', model: LAB_MODEL, tokens: 64, stream: true })),
    };
    const run = await runBaseline(crowd, 'shallow');
    expect(run.recorder.attempts.map((a) => a.status)).toEqual([200, 200, 429]);
    const felt = feltFigures(run.recorder.attempts, ['realtime'], maxWait);
    expect(felt.tiers.realtime!.ttftMs).toMatchObject({ n: 3, max: Infinity, p99: Infinity });
    expect(Number.isFinite(felt.tiers.realtime!.ttftMs!.p50)).toBe(true);
  });

  it('resends count from the first send, as the wait does', () => {
    const first: Attempt = {
      request: 0,
      tier: 'realtime',
      account: 'a',
      tenant: 't',
      stream: true,
      sentAt: 0,
      answeredAt: 100,
      status: 429,
    };
    const second: Attempt = {
      request: 0,
      tier: 'realtime',
      account: 'a',
      tenant: 't',
      stream: true,
      sentAt: 1_000,
      answeredAt: 1_900,
      status: 200,
      startedAt: 1_200,
      firstTokenAt: 1_400,
    };
    const felt = feltFigures([first, second], ['realtime', 'batch'], maxWait);
    expect(felt.tiers.realtime!.ttftMs).toMatchObject({ n: 1, p50: 1_400 });
    expect(felt.tiers.batch!.ttftMs).toBeNull();
    expect(felt.total.ttftMs).toMatchObject({ n: 1, p50: 1_400 });
  });
});

describe('the client reading a stream (stream-answer.ts)', () => {
  const sse = (events: string[]) =>
    new Response(events.map((d) => `data: ${d}\n\n`).join(''), { headers: { 'content-type': 'text/event-stream' } });
  const chunk = (delta: object) =>
    JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
  const rec = (): Attempt => ({ request: 0, tier: 'realtime', account: 'a', tenant: 't', stream: true, sentAt: 0 });

  it('the role-only opening chunk is not a token; the first text is', async () => {
    let now = 0;
    const clock = { now: () => (now += 10) };
    const a = rec();
    const out = await readStreamAnswer(
      sse([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hi' }), chunk({ content: '!' }), '[DONE]']),
      a,
      clock,
      new AbortController().signal,
    );
    expect(out).toEqual({ status: 200 });
    // Read once, at the second event: the first with text.
    expect(a.firstTokenAt).toBe(10);
  });

  it('an error after the 200 is the refusal it would have been; a stream cut before [DONE] is not an answer', async () => {
    const clock = { now: () => 0 };
    const expired = JSON.stringify({
      error: { message: 'waited too long', type: 'timeout', code: 'queue_wait_exceeded' },
    });
    expect(await readStreamAnswer(sse([expired, '[DONE]']), rec(), clock, new AbortController().signal)).toEqual({
      status: 504,
      reason: 'expired',
    });
    const failed = JSON.stringify({ error: { message: 'no', type: 'upstream_error', code: 'upstream_failed' } });
    expect(
      await readStreamAnswer(
        sse([chunk({ content: 'a' }), failed, '[DONE]']),
        rec(),
        clock,
        new AbortController().signal,
      ),
    ).toEqual({ status: 502, reason: 'upstream-failed' });
    expect(await readStreamAnswer(sse([chunk({ content: 'a' })]), rec(), clock, new AbortController().signal)).toEqual({
      status: 502,
      reason: 'stream-cut',
    });
  });

  it('after the client gave up, nothing is stamped', async () => {
    const gaveUp = new AbortController();
    gaveUp.abort(new Error('client timeout'));
    const a = rec();
    await readStreamAnswer(sse([chunk({ content: 'late' }), '[DONE]']), a, { now: () => 5 }, gaveUp.signal);
    expect(a.firstTokenAt).toBeUndefined();
  });
});

describe('streams in traces', () => {
  const src = (streamShare?: number) => ({
    rng: createRng(7),
    accounts: ['a', 'b'],
    model: 'm',
    tokens: (r: ReturnType<typeof createRng>) => r.int(1, 100),
    ...(streamShare === undefined ? {} : { streamShare }),
  });
  const plain = (trace: readonly { stream?: boolean }[]) => trace.map(({ stream: _s, ...e }) => e);

  it('a share of a source streams, drawn apart: times, accounts and tokens stay what they were', () => {
    const none = poisson(src(), 5, 0, 60_000);
    const half = poisson(src(0.5), 5, 0, 60_000);
    const all = poisson(src(1), 5, 0, 60_000);
    expect(plain(half)).toEqual(none);
    expect(plain(all)).toEqual(none);
    expect(none.some((e) => e.stream)).toBe(false);
    expect(all.every((e) => e.stream === true)).toBe(true);
    const share = half.filter((e) => e.stream).length / half.length;
    expect(share).toBeGreaterThan(0.35);
    expect(share).toBeLessThan(0.65);
    expect(poisson(src(0.5), 5, 0, 60_000)).toEqual(half);
    // Two bursts of one source draw their own streams.
    const s = src(0.5);
    const picks = (t: number) => burst(s, 40, t, 1_000).map((e) => e.stream === true);
    expect(picks(0)).not.toEqual(picks(10_000));
    expect(() => poisson(src(2), 5, 0, 1_000)).toThrow(/streamShare/);
  });

  it('JSONL takes an optional stream flag and keeps it through a round trip', () => {
    const trace = parseJsonlTrace(
      '{"t":0,"account":"x","model":"m","tokens":5,"stream":true}\n{"t":5,"account":"y","model":"m","tokens":5,"stream":false}\n',
    );
    expect(trace).toEqual([
      { t: 0, account: 'x', model: 'm', tokens: 5, stream: true },
      { t: 5, account: 'y', model: 'm', tokens: 5 },
    ]);
    expect(parseJsonlTrace(toJsonl(trace))).toEqual(trace);
    expect(() => parseJsonlTrace('{"t":0,"account":"x","model":"m","tokens":5,"stream":"yes"}')).toThrow(
      /line 1: stream/,
    );
    expect(worldStreams({ ...world, trace })).toBe(true);
    expect(worldStreams({ ...world, trace: [{ t: 0, account: 'x', model: 'm', tokens: 5 }] })).toBe(false);
  });
});
