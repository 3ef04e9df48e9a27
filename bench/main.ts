/**
 * The scenario lab: `npm run bench -- <scenario> [--engine embedded|real] [--out dir] [--seed N]`.
 *
 * Replays a trace through Sluice's real code paths and through a hard-limiter
 * baseline, prints the figures side by side, writes a JSON report and an SVG chart
 * to --out (default bench/out/), and prints one JSON object with the headline
 * figures as its last line. `--engine embedded` (default) runs under a virtual
 * clock; `--engine real` starts redis-server and RocketMQ 5.5 and runs on the wall
 * clock, Sluice and the baseline side by side, so it takes as long as the trace.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { barsSvg, comparisonSvg } from './lib/chart.js';
import { renderTable } from './lib/tables.js';
import type { LabEngine } from './lib/engine.js';
import { startRealEngine } from './lib/real-engine.js';
import { StalledRun } from './lib/stall.js';
import { parseJsonlTrace, type TraceEvent } from './lib/trace.js';
import { flood } from './scenarios/flood.js';
import { isolation } from './scenarios/isolation.js';
import { mixedOverload } from './scenarios/mixed-overload.js';
import { replay } from './scenarios/replay.js';
import { retryLoopScenario } from './scenarios/retry-loop.js';
import { scale, type ScalePoint } from './scenarios/scale.js';
import { seed1Ratio } from './scenarios/seed1-ratio.js';
import { seed2Burst } from './scenarios/seed2-burst.js';
import { slotsFromMetrics } from './scenarios/slots-from-metrics.js';
import type { Scenario, ScenarioContext, ScenarioOutput } from './scenarios/types.js';

export const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'seed1-ratio': seed1Ratio,
  'seed2-burst': seed2Burst,
  'mixed-overload': mixedOverload,
  'slots-from-metrics': slotsFromMetrics,
  isolation: isolation as Scenario,
  scale,
  'retry-loop': retryLoopScenario,
  flood,
  replay,
};

/** Why a scenario has no real-engine run, and where its figures on real services come from instead. */
export const EMBEDDED_ONLY: Readonly<Record<string, string>> = {
  isolation: 'isolation on RocketMQ is measured by `npm run bench -- queue` (Suspend vs sleep on the real broker)',
  scale:
    "scale measures the embedded engine's memory per idle LiteTopic; RocketMQ LiteTopics are measured by `npm run bench -- queue`",
};

export interface CliOptions {
  readonly scenario: string;
  readonly engine: 'embedded' | 'real';
  /** Real engine: the consumer group's kind (FIFO per LiteTopic, as deployed, or non-orderly). */
  readonly group?: 'fifo' | 'concurrent';
  readonly out: string;
  readonly seed: number;
  readonly size: 'full' | 'small';
  readonly tracePath?: string;
  readonly flags: Record<string, string>;
}

/**
 * Benchmarks of one part on real services (they start their own redis-server and
 * friends), run as scripts of their own: `npm run bench -- admission [--ops N]`.
 */
export const SERVICE_BENCHES: Readonly<Record<string, { readonly module: string; readonly description: string }>> = {
  admission: {
    module: './admission.ts',
    description: 'admission over Redis TCP and Upstash REST vs @upstash/ratelimit, EVALSHA floor, cached denials',
  },
  queue: {
    module: './queue.ts',
    description:
      'RocketMQ 5.5: isolation (Suspend, sleep and the dispatcher hold against two references, rotated rounds), send->handler latency vs embedded, one LiteTopic drained by a FIFO vs a non-orderly group, many LiteTopics',
  },
  'aggregate-memory': {
    module: './aggregate-memory.ts',
    description: 'store memory of the deployment-wide aggregate for 10,000 tenants bursting in turn, against its bound',
  },
  'results-wake': {
    module: './results-wake.ts',
    description: 'time from a stored result to the waiting edge waking, embedded vs TCP vs REST',
  },
  chaos: {
    module: './chaos/cli.ts',
    description:
      'faults one at a time on real services (edge + 2 dispatchers): lost, answered twice, GPU calls, places, 5xx',
  },
  'closed-loop': {
    module: './closed-loop.ts',
    description:
      'issue 12: closed-loop clients, 1 tenant x 8 and 32 tenants x 1, embedded vs RocketMQ 5.5: req/s ratio, requests >= 1 s, 504s',
  },
};

const USAGE = `usage: npm run bench -- <scenario> [--engine embedded|real] [--out dir] [--seed N] [--size full|small] [--trace file.jsonl]
  --engine embedded (default): virtual clock, in-process store and engine; deterministic, minutes of traffic in seconds
  --engine real: redis-server and RocketMQ 5.5 (started for the run), wall clock, --size small by default; takes as long as the trace
  --group fifo|concurrent (real engine): the LiteTopic consumer group, FIFO per LiteTopic (default, as deployed) or non-orderly
scenarios:
${Object.values(SCENARIOS)
  .map((s) => `  ${s.name.padEnd(12)} ${s.description}${s.engines?.includes('real') ? '' : ' (embedded only)'}`)
  .join('\n')}
${Object.entries(SERVICE_BENCHES)
  .map(([name, b]) => `  ${name.padEnd(12)} ${b.description}`)
  .join('\n')}
  report       every scenario above on the embedded engine, full size, seed 1, into docs/results.md and docs/charts/`;

export function parseArgs(argv: readonly string[]): CliOptions {
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith('--')) throw new Error(`${a} needs a value\n${USAGE}`);
      flags[a.slice(2)] = value;
      i++;
    }
  }
  const scenario = positional[0];
  if (!scenario || positional.length > 1) throw new Error(USAGE);
  if (!SCENARIOS[scenario]) throw new Error(`unknown scenario "${scenario}"\n${USAGE}`);
  const { engine = 'embedded', out = 'bench/out', seed = '1', trace, group, size: sizeFlag, ...rest } = flags;
  // The real engine runs in real time: it plays the scaled-down world unless told otherwise.
  const size = sizeFlag ?? (engine === 'real' ? 'small' : 'full');
  if (engine !== 'embedded' && engine !== 'real') throw new Error(`--engine must be embedded or real, got ${engine}`);
  if (!/^\d+$/.test(seed)) throw new Error(`--seed must be a non-negative integer, got ${seed}`);
  if (size !== 'full' && size !== 'small') throw new Error(`--size must be full or small, got ${size}`);
  if (group !== undefined && (engine !== 'real' || (group !== 'fifo' && group !== 'concurrent')))
    throw new Error(`--group fifo|concurrent goes with --engine real, got ${group}`);
  if (trace !== undefined && scenario !== 'replay')
    throw new Error('--trace goes with the replay scenario: npm run bench -- replay --trace file.jsonl');
  if (scenario === 'replay' && trace === undefined) throw new Error('replay needs --trace file.jsonl');
  if (engine === 'real' && !SCENARIOS[scenario]!.engines?.includes('real')) {
    throw new Error(
      `${scenario} runs on the embedded engine only: ${EMBEDDED_ONLY[scenario] ?? 'it has no real-engine run'}`,
    );
  }
  return {
    scenario,
    engine,
    ...(group ? { group: group as 'fifo' | 'concurrent' } : {}),
    out,
    seed: Number(seed),
    size,
    ...(trace !== undefined ? { tracePath: trace } : {}),
    flags: rest,
  };
}

/** The JSON report: everything the run measured, nothing about the machine's wall clock, so a seed gives identical bytes. */
export function reportJson(o: ScenarioOutput, engine: CliOptions['engine'] = 'embedded'): string {
  const { comparison, ...rest } = o;
  const body = comparison
    ? {
        ...rest,
        comparison: {
          world: comparison.world,
          engine: comparison.engine,
          baselines: comparison.baselines,
          sluice: comparison.sluice,
        },
      }
    : rest;
  return JSON.stringify({ engine, ...body }, null, 2) + '\n';
}

export function charts(o: ScenarioOutput): Record<string, string> {
  if (o.comparison)
    return {
      [`${o.scenario}.svg`]: comparisonSvg(
        o.comparison,
        `${o.scenario} (seed ${o.seed}, ${o.size}): hard limiter + priority engine queue vs Sluice`,
      ),
    };
  if (o.scenario === 'isolation') {
    const runs = (o.details as { runs: { mode: string; throttled: number; healthyPerSec: number }[] }).runs;
    const color = { unthrottled: '#6b7280', suspend: '#16a34a', sleep: '#dc2626' } as Record<string, string>;
    return {
      'isolation.svg': barsSvg(
        'isolation: healthy LiteTopics’ throughput, 50 workers, N of 50 LiteTopics throttled for 300 ms',
        [5, 40].map((n) => ({
          label: `${n} throttled`,
          bars: runs
            .filter((r) => r.throttled === n)
            .map((r) => ({ label: r.mode, value: r.healthyPerSec, color: color[r.mode] ?? '#000' })),
        })),
        'healthy messages / s',
      ),
    };
  }
  if (o.scenario === 'scale') {
    const points = (o.details as { points: ScalePoint[] }).points;
    return {
      'scale.svg': barsSvg(
        'scale: bytes per idle LiteTopic (green) and dispatcher CPU µs per delivery (blue), by idle LiteTopics',
        points.map((x) => ({
          label: `${x.idleLiteTopics.toLocaleString('en')} idle`,
          bars: [
            { label: 'B / idle topic', value: x.bytesPerIdleLiteTopic ?? 0, color: '#16a34a' },
            { label: 'CPU µs / delivery', value: x.cpuMicrosPerDelivery, color: '#2563eb' },
          ],
        })),
        'bytes · µs',
      ),
    };
  }
  return {};
}

/** The trace at `path`; what is wrong with it is said in plain words (the file, the line), never as a stack. */
function readTrace(path: string): TraceEvent[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`--trace ${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return parseJsonlTrace(text);
  } catch (error) {
    throw new Error(`--trace ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function runScenario(
  options: CliOptions,
  log: (line: string) => void,
  engine?: LabEngine,
  trace: TraceEvent[] | undefined = options.tracePath ? readTrace(options.tracePath) : undefined,
): Promise<ScenarioOutput> {
  const ctx: ScenarioContext = {
    seed: options.seed,
    size: options.size,
    flags: options.flags,
    log,
    ...(engine ? { engine } : {}),
    ...(trace ? { trace } : {}),
  };
  return SCENARIOS[options.scenario]!.run(ctx);
}

async function main(): Promise<number> {
  if (process.argv[2] === 'report') {
    const { reportCli } = await import('./report.js');
    return reportCli(process.argv.slice(3));
  }
  const service = SERVICE_BENCHES[process.argv[2] ?? ''];
  if (service) {
    // The script reads its own flags from argv and exits when done.
    process.argv.splice(2, 1);
    await import(service.module);
    return new Promise(() => {});
  }
  let options: CliOptions;
  let trace: TraceEvent[] | undefined;
  try {
    options = parseArgs(process.argv.slice(2));
    // Before any engine starts: a bad trace is said at once, not after a broker's minute.
    trace = options.tracePath ? readTrace(options.tracePath) : undefined;
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  const started = performance.now();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const engine =
    options.engine === 'real' ? await startRealEngine(log, { orderly: options.group !== 'concurrent' }) : undefined;
  let output: ScenarioOutput;
  // A run whose clock has nothing left to fire while answers are awaited would let
  // Node exit 0 in silence; say so and fail instead.
  const silent = () => {
    log(
      `${options.scenario}: the run stopped before it finished: nothing was left to happen (no timer, no I/O) while ` +
        'requests were still unanswered. Some part waits on something that will never come: look at the policy ' +
        '(slots, shares, lendable) and the log above.',
    );
    process.exit(3);
  };
  process.once('beforeExit', silent);
  try {
    output = await runScenario(options, log, engine, trace);
  } finally {
    process.off('beforeExit', silent);
    await engine?.close();
  }
  const outDir = resolve(options.out);
  mkdirSync(outDir, { recursive: true });
  const written = [join(outDir, `${output.scenario}.json`)];
  writeFileSync(written[0]!, reportJson(output, options.engine));
  for (const [name, svg] of Object.entries(charts(output))) {
    writeFileSync(join(outDir, name), svg);
    written.push(join(outDir, name));
  }
  for (const t of output.tables) process.stdout.write(`${renderTable(t)}\n\n`);
  log(`wrote ${written.join(', ')} in ${((performance.now() - started) / 1000).toFixed(1)} s (wall)`);
  process.stdout.write(
    `${JSON.stringify({ scenario: output.scenario, seed: output.seed, size: output.size, engine: options.engine, ...output.headline })}\n`,
  );
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('bench/main.ts')) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      // A stalled run's message is its diagnosis; no stack trace adds to it.
      if (error instanceof StalledRun) {
        process.stderr.write(`${error.diagnosis}\n`);
        process.exit(3);
      }
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
