import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../../functions/cli/sluice.js';
import { fileSource } from '../../../lib/policy/sources/file.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { basePolicy } from '../../lib/policy/fixtures.js';

const NOW = Date.parse('2026-12-01T08:00:00Z');

function policyFile() {
  const path = join(mkdtempSync(join(tmpdir(), 'sluice-cli-')), 'policy.yaml');
  writeFileSync(path, YAML.stringify(basePolicy()));
  return path;
}

async function sluice(path: string, ...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['--file', path, ...args], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    now: () => NOW,
    env: {},
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

const read = async (path: string) => parsePolicy(await fileSource(path).load());

describe('sluice command', () => {
  it('limits set and get, on the policy file', async () => {
    const path = policyFile();
    expect((await sluice(path, 'limits', 'set', '--tenant', 'acme', '--rpm', '100', '--rate', '2')).code).toBe(0);
    expect((await sluice(path, 'limits', 'set', '--account', 'svc1', '--tpm', '5000')).code).toBe(0);
    expect((await read(path)).tenants.acme!.limits).toEqual({ rpm: 100, rate: 2 });
    const got = await sluice(path, 'limits', 'get', '--account', 'svc1', '--model', 'm');
    expect(JSON.parse(got.out)).toMatchObject({ accountModel: { tpm: 5000, rate: 2 }, tenant: { rpm: 100 } });
  });

  it('reserve add, list and cancel; a booking that does not fit is refused with the reason and exit 1', async () => {
    const path = policyFile();
    const add = await sluice(
      path,
      'reserve',
      'add',
      '--tenant',
      'acme',
      '--model',
      'm',
      '--from',
      '+1h',
      '--to',
      '+2h',
      '--tpm',
      '20000',
      '--id',
      'launch',
    );
    expect(add).toMatchObject({ code: 0, out: 'booked launch: 2026-12-01T09:00:00.000Z to 2026-12-01T10:00:00.000Z' });
    const refused = await sluice(
      path,
      'reserve',
      'add',
      '--tenant',
      'acme',
      '--model',
      'm',
      '--from',
      '2026-12-01T09:30:00Z',
      '--to',
      '+3h',
      '--tpm',
      '20000',
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/booking refused: model "m" can take 30000 booked tokens per minute/);
    expect((await sluice(path, 'reserve', 'list')).out).toMatch(
      /^launch\tacme\tm\t2026-12-01T09:00:00.000Z\t.*\tupcoming$/,
    );
    expect((await sluice(path, 'reserve', 'cancel', 'launch')).code).toBe(0);
    expect((await read(path)).reservations).toEqual([]);
  });

  it('pause and resume a tenant or an account', async () => {
    const path = policyFile();
    await sluice(path, 'pause', '--tenant', 'beta');
    await sluice(path, 'pause', '--account', 'svc1');
    let p = await read(path);
    expect([p.tenants.beta!.paused, p.accounts.svc1!.paused]).toEqual([true, true]);
    await sluice(path, 'resume', '--tenant', 'beta');
    p = await read(path);
    expect(p.tenants.beta!.paused).toBe(false);
    expect((await sluice(path, 'pause', '--tenant', 'ghost')).err).toMatch(/unknown tenant "ghost"/);
  });

  it('usage errors exit 2 and say what is missing; an invalid value leaves the file untouched', async () => {
    const path = policyFile();
    const before = await read(path);
    expect(await sluice(path, 'limits', 'set', '--tenant', 'acme')).toMatchObject({ code: 2 });
    expect((await sluice(path, 'limits', 'set', '--tenant', 'acme', '--rpm', 'lots')).err).toMatch(
      /--rpm needs a number/,
    );
    expect((await sluice(path, 'limits', 'set', '--tenant', 'acme', '--rpm=-1')).code).toBe(1);
    expect(await read(path)).toEqual(before);
    expect((await sluice(path, 'frobnicate')).code).toBe(2);
  });

  it('runs as bin/sluice', () => {
    const path = policyFile();
    const r = spawnSync('bin/sluice', ['--file', path, 'pause', '--tenant', 'acme'], { encoding: 'utf8' });
    expect(r.stdout.trim()).toBe('paused {"tenant":"acme"}');
    expect(r.status).toBe(0);
  });
});
