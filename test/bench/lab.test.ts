import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { charts, parseArgs, reportJson, runScenario, SCENARIOS } from '../../bench/main.js';
import { createRng } from '../../bench/lib/rng.js';
import { burst, diurnal, merge, parseJsonlTrace, poisson, retryLoop, toJsonl } from '../../bench/lib/trace.js';
import { isolation } from '../../bench/scenarios/isolation.js';
import { withEngineFlags } from '../../bench/lib/world.js';
import { seed1Small, seed1World } from '../../bench/scenarios/seed1-ratio.js';

const run = promisify(execFile);
const cli = (args: string[]) => run('npx', ['tsx', 'bench/main.ts', ...args], { cwd: process.cwd(), timeout: 240_000 });

describe('trace generators', () => {
  const src = (seed: number) => ({ rng: createRng(seed), accounts: ['a', 'b'], model: 'm', tokens: () => 10 });

  it('are deterministic for a seed and differ between seeds', () => {
    expect(poisson(src(1), 5, 0, 60_000)).toEqual(poisson(src(1), 5, 0, 60_000));
    expect(poisson(src(1), 5, 0, 60_000)).not.toEqual(poisson(src(2), 5, 0, 60_000));
  });

  it('Poisson arrives at about its rate, in time order, within its interval', () => {
    const trace = poisson(src(3), 10, 1_000, 101_000);
    expect(trace.length).toBeGreaterThan(900);
    expect(trace.length).toBeLessThan(1100);
    expect(trace.every((e, i) => e.t >= 1_000 && e.t <= 101_000 && (i === 0 || e.t >= trace[i - 1]!.t))).toBe(true);
  });

  it('bursts put their count in their spread; diurnal peaks mid-period; retry loops carry their behavior', () => {
    const b = burst(src(4), 50, 10_000, 2_000);
    expect(b).toHaveLength(50);
    expect(b.every((e) => e.t >= 10_000 && e.t <= 12_000)).toBe(true);
    const d = diurnal(src(5), 1, 20, 100_000, 0, 100_000);
    const mid = d.filter((e) => e.t >= 40_000 && e.t < 60_000).length;
    const edge = d.filter((e) => e.t < 10_000 || e.t >= 90_000).length;
    expect(mid).toBeGreaterThan(3 * edge);
    const r = retryLoop(src(6), 2, 0, 10_000, 50, 7);
    expect(
      r.every((e) => e.retry?.delayMs === 50 && e.retry.maxAttempts === 7 && e.retry.honorRetryAfter === false),
    ).toBe(true);
    const m = merge(b, r);
    expect(m).toHaveLength(b.length + r.length);
    expect(m.every((e, i) => i === 0 || e.t >= m[i - 1]!.t)).toBe(true);
  });

  it('JSONL: numeric or ISO times, optional tenant, errors name the line, round trip', () => {
    const trace = parseJsonlTrace(
      '{"t":250,"account":"x","model":"m","tokens":5,"tier":"batch"}\n\n# comment\n{"t":0,"account":"y","model":"m","tokens":7,"tenant":"acme"}\n',
    );
    expect(trace).toEqual([
      { t: 0, account: 'y', model: 'm', tokens: 7, tenant: 'acme' },
      { t: 250, account: 'x', model: 'm', tokens: 5, tier: 'batch' },
    ]);
    expect(parseJsonlTrace(toJsonl(trace))).toEqual(trace);
    const iso = parseJsonlTrace(
      '{"t":"2026-01-01T00:00:01.500Z","account":"x","model":"m","tokens":1}\n{"t":"2026-01-01T00:00:00Z","account":"x","model":"m","tokens":1}',
    );
    expect(iso.map((e) => e.t)).toEqual([0, 1500]);
    // A day of traffic: more ISO times than a spread's arguments fit on the call stack.
    const day = Array.from(
      { length: 200_000 },
      (_, i) =>
        `{"t":"${new Date(Date.UTC(2026, 0, 1) + (200_000 - i) * 400).toISOString()}","account":"x","model":"m","tokens":1}`,
    );
    const long = parseJsonlTrace(day.join('\n'));
    expect([long.length, long[0]!.t, long.at(-1)!.t]).toEqual([200_000, 0, 199_999 * 400]);
    expect(() =>
      parseJsonlTrace('{"t":0,"account":"x","model":"m","tokens":1}\n{"t":1,"account":"x","model":"m"}'),
    ).toThrow(/line 2: tokens/);
    expect(() => parseJsonlTrace('nope')).toThrow(/line 1: not JSON/);
    expect(() => parseJsonlTrace('{"t":0,"account":"x","model":"m","tokens":1,"extra":1}')).toThrow(/line 1/);
    expect(() => parseJsonlTrace('')).toThrow(/empty/);
    // The policy's own name rule: an account named after Object.prototype would read as its member.
    for (const name of ['constructor', 'toString', '__proto__'])
      expect(() => parseJsonlTrace(`{"t":0,"account":"${name}","model":"m","tokens":1}`)).toThrow(/line 1: account/);
    expect(() => parseJsonlTrace('{"t":0,"account":"x","model":"m","tokens":1,"tenant":"hasOwnProperty"}')).toThrow(
      /line 1: tenant: .*reserved/,
    );
  });
});

describe('command line', () => {
  it('parses scenarios and flags, and refuses what it cannot do', () => {
    expect(parseArgs(['seed1-ratio'])).toMatchObject({
      scenario: 'seed1-ratio',
      engine: 'embedded',
      out: 'bench/out',
      seed: 1,
      size: 'full',
    });
    expect(parseArgs(['scale', '--seed', '9', '--out=/tmp/x', '--counts', '10,20'])).toMatchObject({
      seed: 9,
      out: '/tmp/x',
      flags: { counts: '10,20' },
    });
    expect(Object.keys(SCENARIOS).sort()).toEqual([
      'flood',
      'isolation',
      'mixed-overload',
      'replay',
      'retry-loop',
      'scale',
      'seed1-ratio',
      'seed2-burst',
      'slots-from-metrics',
    ]);
    expect(() => parseArgs([])).toThrow(/usage/);
    expect(() => parseArgs(['nope'])).toThrow(/unknown scenario/);
    expect(() => parseArgs(['seed1-ratio', '--engine', 'cloud'])).toThrow(/--engine/);
    expect(() => parseArgs(['seed1-ratio', '--seed', 'x'])).toThrow(/--seed/);
    expect(() => parseArgs(['seed1-ratio', '--trace', 'f.jsonl'])).toThrow(/replay/);
    expect(() => parseArgs(['replay'])).toThrow(/--trace/);
  });

  it('--in-flight and --workers set the engine of every trace scenario', () => {
    const world = seed1World(1, seed1Small);
    expect(withEngineFlags(world, { 'in-flight': '1', workers: '8' })).toMatchObject({
      inFlightPerTopic: 1,
      workers: 8,
    });
    expect(withEngineFlags(world, {})).toEqual(world);
    expect(() => withEngineFlags(world, { 'in-flight': '0' })).toThrow(/--in-flight/);
  });

  it('--engine real runs the trace scenarios; isolation and scale say where their real-service figures come from', () => {
    // Real time: the scaled-down world unless --size says otherwise.
    for (const name of ['seed1-ratio', 'seed2-burst', 'retry-loop'])
      expect(parseArgs([name, '--engine', 'real'])).toMatchObject({ engine: 'real', size: 'small' });
    expect(parseArgs(['seed1-ratio', '--engine', 'real', '--size', 'full'])).toMatchObject({ size: 'full', flags: {} });
    expect(parseArgs(['seed2-burst', '--engine', 'real', '--group', 'concurrent'])).toMatchObject({
      group: 'concurrent',
      flags: {},
    });
    expect(() => parseArgs(['seed2-burst', '--group', 'concurrent'])).toThrow(/--group .* --engine real/);
    expect(() => parseArgs(['seed2-burst', '--engine', 'real', '--group', 'lifo'])).toThrow(/--group/);
    expect(() => parseArgs(['isolation', '--engine', 'real'])).toThrow(
      /embedded engine only: .*npm run bench -- queue/,
    );
    expect(() => parseArgs(['scale', '--engine', 'real'])).toThrow(/embedded engine only/);
  });

  it(
    'replays a JSONL trace: table, JSON report, SVG chart, and the headline JSON as the last line',
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-lab-'));
      const rng = createRng(11);
      const trace = merge(
        poisson(
          { rng: rng.fork('a'), accounts: ['app-1', 'app-2'], model: 'my-model', tokens: (r) => r.int(16, 64) },
          2,
          0,
          30_000,
        ),
        burst({ rng: rng.fork('b'), accounts: ['job-1'], model: 'my-model', tokens: () => 64 }, 60, 5_000, 1_000),
      ).map((e) => ({ ...e, tier: e.account.startsWith('job') ? 'batch' : 'realtime' }));
      writeFileSync(join(dir, 'trace.jsonl'), toJsonl(trace));
      const { stdout } = await cli(['replay', '--trace', join(dir, 'trace.jsonl'), '--out', dir, '--gpu-slots', '4']);
      const lines = stdout.trim().split('\n');
      const headline = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
      expect(headline).toMatchObject({ scenario: 'replay', engine: 'embedded', requests: trace.length });
      expect(stdout).toContain('limiter + priority engine queue');
      expect(stdout).toContain('Sluice vs best');
      // Who got what: every tenant, and the accounts served worst.
      expect(stdout).toMatch(/per tenant: requests served\n.*\n.*\n.*realtime +app-1 +1 +\d+/);
      expect(stdout).toContain('per account: requests served');
      const report = JSON.parse(readFileSync(join(dir, 'replay.json'), 'utf8')) as {
        comparison: { sluice: { total: { sent: number } } };
      };
      expect(report.comparison.sluice.total.sent).toBe(trace.length);
      expect(existsSync(join(dir, 'replay.svg'))).toBe(true);
      expect(readFileSync(join(dir, 'replay.svg'), 'utf8')).toMatch(/^<svg[\s\S]*<polyline[\s\S]*<\/svg>\n$/);
    },
  );
});

describe('replay with a policy file', () => {
  it('applies tiers/defaults/tenants from --policy and refuses other keys', { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-lab-'));
    writeFileSync(
      join(dir, 't.jsonl'),
      toJsonl([
        { t: 0, account: 'a', model: 'x', tokens: 16, tenant: 'acme' },
        { t: 10, account: 'b', model: 'x', tokens: 16, tenant: 'other' },
        { t: 20, account: 'a', model: 'x', tokens: 16, tenant: 'acme' },
      ]),
    );
    writeFileSync(join(dir, 'p.json'), JSON.stringify({ tenants: { acme: { paused: true } } }));
    const options = {
      scenario: 'replay',
      engine: 'embedded' as const,
      out: dir,
      size: 'full' as const,
      seed: 1,
      tracePath: join(dir, 't.jsonl'),
    };
    const out = await runScenario({ ...options, flags: { policy: join(dir, 'p.json') } }, () => {});
    expect(out.comparison!.sluice.refusalsByReason).toEqual({ 'limit:tenant-paused': 2 });
    expect(out.comparison!.sluice.total.ok).toBe(1);
    // The baselines honour the same pause.
    for (const b of ['shallow', 'fcfs', 'priority'] as const)
      expect(out.comparison!.baselines[b].refusalsByReason).toEqual({ 'limit:tenant-paused': 2 });
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ accounts: {} }));
    await expect(runScenario({ ...options, flags: { policy: join(dir, 'bad.json') } }, () => {})).rejects.toThrow(
      /only tiers, defaults and tenants/,
    );
    // A bad trace is named with its file and line, in words.
    writeFileSync(
      join(dir, 'bad.jsonl'),
      '{"t":0,"account":"a","model":"x","tokens":1}\n{"t":1,"account":"constructor","model":"x","tokens":1}\n',
    );
    await expect(runScenario({ ...options, flags: {}, tracePath: join(dir, 'bad.jsonl') }, () => {})).rejects.toThrow(
      `--trace ${join(dir, 'bad.jsonl')}: trace line 2: account: a name of Object.prototype`,
    );
    await expect(runScenario({ ...options, flags: {}, tracePath: join(dir, 'none.jsonl') }, () => {})).rejects.toThrow(
      /none\.jsonl: cannot read it \(ENOENT\)/,
    );
  });
});

describe('determinism', () => {
  it(
    'seed1-ratio: the same seed gives byte-identical JSON; another seed another trace',
    { timeout: 400_000 },
    async () => {
      const options = {
        scenario: 'seed1-ratio',
        engine: 'embedded' as const,
        out: '',
        size: 'small' as const,
        flags: {},
      };
      const a = reportJson(await runScenario({ ...options, seed: 7 }, () => {}));
      const b = reportJson(await runScenario({ ...options, seed: 7 }, () => {}));
      expect(a).toBe(b);
      expect(seed1World(8, seed1Small).trace).not.toEqual(seed1World(7, seed1Small).trace);
    },
  );

  it(
    'retry-loop (retries, async replies): the same seed gives byte-identical JSON and chart',
    { timeout: 120_000 },
    async () => {
      const options = {
        scenario: 'retry-loop',
        engine: 'embedded' as const,
        out: '',
        size: 'small' as const,
        flags: {},
        seed: 3,
      };
      const first = await runScenario(options, () => {});
      const second = await runScenario(options, () => {});
      expect(reportJson(first)).toBe(reportJson(second));
      expect(charts(first)).toEqual(charts(second));
    },
  );
});

describe('isolation scenario (the lead experiment, in the lab)', () => {
  it(
    'one denominator (the unthrottled run): Suspend keeps >= 90% on either group; sleep starves at 40 throttled only where a LiteTopic has several in flight',
    { timeout: 60_000 },
    async () => {
      const out = await isolation.run({ seed: 1, size: 'small', log: () => {} });
      console.log(`isolation small: ${JSON.stringify(out.headline)}`);
      for (const group of ['fifo', 'concurrent']) {
        expect(out.headline[`${group}SuspendHealthyShare5`]).toBeGreaterThanOrEqual(0.9);
        expect(out.headline[`${group}SuspendHealthyShare40`]).toBeGreaterThanOrEqual(0.9);
      }
      expect(out.headline.concurrentSleepHealthyShare40).toBeLessThan(0.25);
      expect(out.headline.concurrentSleepHealthyShare5).toBeLessThan(out.headline.concurrentSuspendHealthyShare5!);
      // A FIFO group runs one message per LiteTopic: with a worker per LiteTopic, a sleeping one holds only its own.
      expect(out.headline.fifoSleepHealthyShare40).toBeGreaterThanOrEqual(0.95);
      expect(charts(out as never)['isolation.svg']).toMatch(/<svg/);
    },
  );
});
