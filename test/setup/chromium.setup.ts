/**
 * Integration setup: Debian's chromium for the real-browser dashboard test
 * (driven by playwright-core, which ships no browser). Installed with apt-get when
 * /usr/bin/chromium is missing, printing apt's progress; other sessions may hold
 * the dpkg lock, so it is waited for and each step retried. If it cannot be
 * installed, setup throws and the browser test fails; nothing is skipped.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';

export const CHROMIUM_PATH = '/usr/bin/chromium';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Path of the chromium executable for playwright-core. */
    chromiumPath: string;
  }
}

const log = (message: string) => process.stderr.write(`[chromium.setup] ${message}\n`);

function run(command: string, args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    const relay = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) log(`  ${line}`);
    };
    child.stdout.on('data', relay);
    child.stderr.on('data', relay);
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? 1));
  });
}

export async function ensureChromiumInstalled(): Promise<void> {
  if (existsSync(CHROMIUM_PATH)) return;
  log(
    `${CHROMIUM_PATH} is missing; installing Debian's chromium (apt-get update && apt-get install -y chromium), this takes a minute or two`,
  );
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  const steps = [
    [...sudo, 'apt-get', ...lockWait, 'update'],
    [...sudo, 'apt-get', ...lockWait, 'install', '-y', '--no-install-recommends', 'chromium', 'fonts-dejavu-core'],
  ];
  for (const step of steps) {
    let code = 1;
    for (let attempt = 1; attempt <= 3 && code !== 0; attempt++) {
      log(`$ ${step.join(' ')}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
      code = await run(step[0]!, step.slice(1));
      if (code !== 0 && attempt < 3) {
        log(`exit ${code}; retrying in ${attempt * 5}s (apt may be locked by another session)`);
        await new Promise((r) => setTimeout(r, attempt * 5000));
      }
    }
    if (code !== 0) throw new Error(`${step.join(' ')} failed with exit code ${code}`);
  }
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`${CHROMIUM_PATH} still missing after apt-get install chromium`);
  log('chromium installed');
}

export default async function setup({ provide }: Pick<TestProject, 'provide'>): Promise<void> {
  await ensureChromiumInstalled();
  provide('chromiumPath', CHROMIUM_PATH);
}
