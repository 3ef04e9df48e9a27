/** Operator input is looked up as own entries: an Object.prototype name is an unknown tenant, account or model. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../functions/cli/sluice.js';
import { basePolicy } from '../../lib/policy/fixtures.js';

const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

describe('sluice command with prototype names', () => {
  it.each(NAMES)('%s is unknown everywhere, and the policy file is left as it was', async (name) => {
    const path = join(mkdtempSync(join(tmpdir(), 'sluice-cli-')), 'policy.yaml');
    writeFileSync(path, YAML.stringify(basePolicy()));
    const before = readFileSync(path, 'utf8');
    const run = async (...args: string[]) => {
      const err: string[] = [];
      const code = await runCli(['--file', path, ...args], {
        out: () => {},
        err: (l) => err.push(l),
        now: () => 1_000,
        env: {},
      });
      return { code, err: err.join('\n') };
    };
    for (const args of [
      ['pause', '--tenant', name],
      ['resume', '--account', name],
      ['limits', 'get', '--account', name, '--model', 'm'],
      ['limits', 'get', '--tenant', name],
      ['limits', 'set', '--tenant', name, '--rpm', '5'],
      ['limits', 'set', '--tenant', 'acme', '--model', name, '--rpm', '5'],
      ['limits', 'set', '--model', name, '--rpm', '5'],
      ['reserve', 'add', '--tenant', name, '--from', '+1h', '--to', '+2h', '--rpm', '5'],
      ['reserve', 'cancel', name],
    ]) {
      const { code, err } = await run(...args);
      expect(code, args.join(' ')).not.toBe(0);
      expect(err, args.join(' ')).toMatch(/unknown|no booking|invalid/);
    }
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(({} as Record<string, unknown>).paused).toBeUndefined();
  });
});
