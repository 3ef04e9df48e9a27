import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SCENARIOS } from '../../bench/main.js';
import {
  NOT_IN_REPORT,
  REPORT_COMMAND,
  REPORT_VARIANTS,
  reportedScenarios,
  variantName,
  writeReport,
} from '../../bench/report.js';

const run = promisify(execFile);

/** The files the report owns under a directory, by path relative to it. */
function reportFiles(dir: string): string[] {
  const charts = existsSync(join(dir, 'charts'))
    ? readdirSync(join(dir, 'charts'))
        .filter((f) => f.endsWith('.svg'))
        .map((f) => `charts/${f}`)
    : [];
  return [...(existsSync(join(dir, 'results.md')) ? ['results.md'] : []), ...charts].sort();
}

/** `diff -u` of two files, cut short: enough to see what moved. */
async function shortDiff(checked: string, fresh: string): Promise<string> {
  const lines = await run('diff', ['-u', checked, fresh]).then(
    () => [] as string[],
    (e: { stdout?: string }) => (e.stdout ?? '').split('\n').map((l) => (l.length > 160 ? `${l.slice(0, 160)}...` : l)),
  );
  return lines.length > 30
    ? [...lines.slice(0, 30), `... (${lines.length - 30} more diff lines)`].join('\n')
    : lines.join('\n');
}

describe('the report', () => {
  it('covers every lab scenario but those it names with a reason', () => {
    expect(Object.keys(NOT_IN_REPORT).every((name) => Object.hasOwn(SCENARIOS, name))).toBe(true);
    expect(reportedScenarios()).toEqual(Object.keys(SCENARIOS).filter((name) => !(name in NOT_IN_REPORT)));
    expect(reportedScenarios()).toContain('seed2-burst');
    expect(reportedScenarios()).not.toContain('scale');
    // A variant runs a reported scenario again with flags, and is headed by them.
    for (const v of REPORT_VARIANTS) expect(reportedScenarios()).toContain(v.scenario);
    expect(variantName({ dispatchers: '2' })).toBe('--dispatchers 2');
  });

  it('writes its files and removes charts it no longer draws, nothing else', () => {
    const out = mkdtempSync(join(tmpdir(), 'sluice-report-write-'));
    try {
      mkdirSync(join(out, 'charts'));
      writeFileSync(join(out, 'charts', 'gone.svg'), '<svg/>');
      writeFileSync(join(out, 'charts', 'notes.txt'), 'kept');
      writeReport(
        out,
        new Map([
          ['results.md', '# r\n'],
          ['charts/a.svg', '<svg>a</svg>'],
        ]),
      );
      expect(readdirSync(join(out, 'charts')).sort()).toEqual(['a.svg', 'notes.txt']);
      expect(readFileSync(join(out, 'results.md'), 'utf8')).toBe('# r\n');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  // Every reported scenario at full size, once: minutes on a busy machine.
  it(
    'docs/results.md and docs/charts/ are what the command generates from the code',
    { timeout: 20 * 60_000 },
    async () => {
      const out = mkdtempSync(join(tmpdir(), 'sluice-report-'));
      try {
        await run('npx', ['tsx', 'bench/main.ts', 'report', '--out', out], {
          timeout: 19 * 60_000,
          maxBuffer: 16 << 20,
        });
        const fresh = reportFiles(out);
        const checked = reportFiles('docs');
        expect(fresh).toContain('results.md');
        const problems: string[] = [];
        for (const f of [...new Set([...fresh, ...checked])].sort()) {
          if (!checked.includes(f)) problems.push(`docs/${f} is missing`);
          else if (!fresh.includes(f)) problems.push(`docs/${f} is no longer generated`);
          else if (readFileSync(join(out, f), 'utf8') !== readFileSync(join('docs', f), 'utf8')) {
            problems.push(`docs/${f} differs from a fresh run:\n${await shortDiff(join('docs', f), join(out, f))}`);
          }
        }
        if (problems.length > 0) throw new Error(`${problems.join('\n\n')}\n\nregenerate with: ${REPORT_COMMAND}`);
      } finally {
        rmSync(out, { recursive: true, force: true });
      }
    },
  );
});
