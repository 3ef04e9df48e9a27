/**
 * `npm run bench -- report [--out docs]`: every lab scenario once, on the embedded
 * engine at full size with seed 1, rendered into <out>/results.md with its charts
 * in <out>/charts/. The embedded engine runs on a virtual clock, so the files are
 * the same bytes on every machine; test/bench/report.test.ts regenerates them and
 * fails when the checked ones differ. Progress (and wall time) goes to stderr only.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { charts, runScenario, SCENARIOS } from './main.js';
import { resultsMarkdown, type ReportedScenario } from './lib/results-doc.js';

export const REPORT_COMMAND = 'npm run bench -- report';
export const REPORT_TEST = 'test/bench/report.test.ts';
const SEED = 1;
const SIZE = 'full';
const CHARTS = 'charts';

/**
 * Scenarios the checked report leaves out, and why. A scenario whose figures vary
 * between runs of one seed cannot be in a file a test compares byte for byte.
 */
export const NOT_IN_REPORT: Readonly<Record<string, string>> = {
  scale:
    "its figures are this process's heap growth and CPU time per delivery, which move from run to run " +
    '(only its delivery counts repeat, and they say nothing alone), so a checked copy would fail its test at random. ' +
    '`npm run bench -- scale` measures it, and `test/bench/scale.test.ts` holds it to its target.',
  replay: 'it replays a trace of your own: `npm run bench -- replay --trace my.jsonl`.',
};

/** Every scenario of the lab but those left out above: a scenario added to the lab is reported without a change here. */
export function reportedScenarios(): string[] {
  return Object.keys(SCENARIOS).filter((name) => !Object.hasOwn(NOT_IN_REPORT, name));
}

/**
 * Scenarios the report runs once more with flags, each its own section: where a
 * deployment differs from the lab's default (two dispatchers sharing the store)
 * and the difference is the point.
 */
export const REPORT_VARIANTS: readonly {
  readonly scenario: string;
  readonly flags: Readonly<Record<string, string>>;
}[] = [
  { scenario: 'seed2-burst', flags: { dispatchers: '2' } },
  { scenario: 'mixed-overload', flags: { dispatchers: '2' } },
];

/** How a variant is named in headings and chart files: the command-line flags it adds. */
export function variantName(flags: Readonly<Record<string, string>>): string {
  return Object.entries(flags)
    .map(([k, v]) => `--${k} ${v}`)
    .join(' ');
}

/** Runs each reported scenario once; returns the report's files by path relative to its directory. */
export async function buildReport(
  log: (line: string) => void,
  onScenario: (name: string) => void = () => {},
): Promise<Map<string, string>> {
  const runs = [...reportedScenarios().map((scenario) => ({ scenario, flags: {} })), ...REPORT_VARIANTS];
  const files = new Map<string, string>();
  const reported: ReportedScenario[] = [];
  for (const [i, { scenario, flags }] of runs.entries()) {
    const variant = variantName(flags);
    const name = variant ? `${scenario} ${variant}` : scenario;
    onScenario(name);
    log(`report: ${name} (${i + 1} of ${runs.length})`);
    const started = performance.now();
    const output = await runScenario({ scenario, engine: 'embedded', out: '', seed: SEED, size: SIZE, flags }, log);
    const chartPaths: string[] = [];
    for (const [file, svg] of Object.entries(charts(output))) {
      // A variant's charts beside the default run's: same scenario, so its flags go into the file name.
      const path = `${CHARTS}/${variant ? file.replace(/\.svg$/, `${variant.replace(/[^a-z0-9]+/gi, '-')}.svg`) : file}`;
      files.set(path, svg);
      chartPaths.push(path);
    }
    reported.push({
      output,
      description: SCENARIOS[scenario]!.description,
      charts: chartPaths,
      ...(variant ? { variant } : {}),
    });
    log(`report: ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  files.set(
    'results.md',
    resultsMarkdown({
      command: REPORT_COMMAND,
      checkedBy: REPORT_TEST,
      engine: 'embedded',
      size: SIZE,
      seed: SEED,
      scenarios: reported,
      omitted: NOT_IN_REPORT,
    }),
  );
  return files;
}

/** Writes the files under `out`, and removes charts of the report's own directory that it no longer draws. */
export function writeReport(out: string, files: ReadonlyMap<string, string>): string[] {
  const chartDir = join(out, CHARTS);
  mkdirSync(chartDir, { recursive: true });
  for (const stale of readdirSync(chartDir)) {
    if (stale.endsWith('.svg') && !files.has(`${CHARTS}/${stale}`)) rmSync(join(chartDir, stale));
  }
  const written: string[] = [];
  for (const [path, text] of files) {
    const target = join(out, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
    written.push(target);
  }
  return written;
}

const USAGE = `usage: ${REPORT_COMMAND} [--out dir]   (default docs: writes docs/results.md and docs/charts/)`;

export async function reportCli(argv: readonly string[]): Promise<number> {
  let out = 'docs';
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--out' && argv[i + 1] !== undefined) out = argv[++i]!;
    else if (a.startsWith('--out=')) out = a.slice('--out='.length);
    else {
      process.stderr.write(`${a === '--help' ? '' : `unexpected argument ${a}\n`}${USAGE}\n`);
      return a === '--help' ? 0 : 1;
    }
  }
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const started = performance.now();
  let running = '';
  // A scenario whose clock runs dry with answers still awaited would let Node exit 0
  // with half a report; fail and say which one instead.
  const silent = () => {
    log(
      `report: ${running} stopped before it finished: nothing was left to happen while requests were unanswered; no file written`,
    );
    process.exit(3);
  };
  process.once('beforeExit', silent);
  let files: Map<string, string>;
  try {
    files = await buildReport(log, (name) => (running = name));
  } finally {
    process.off('beforeExit', silent);
  }
  const written = writeReport(resolve(out), files);
  log(
    `report: wrote ${written.length} files under ${resolve(out)} in ${((performance.now() - started) / 1000).toFixed(1)} s (wall)`,
  );
  return 0;
}
