/**
 * AWS's Node.js runtime interface client (`aws-lambda-ric` on npm), the same loop and
 * `awslambda.streamifyResponse` the managed runtime runs, installed once into `.cache`
 * (it builds its native HTTP client from the sources it ships: a C++ toolchain, cmake and
 * make are needed) and started as one execution environment per process.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Environment } from './function-url.ts';
import { eachLine } from './lines.ts';

export const RIC_VERSION = '4.0.2';

export function ensureRic(cacheDir: string, log: (line: string) => void): string {
  const dir = resolve(cacheDir, `aws-lambda-ric-${RIC_VERSION}`);
  const entry = join(dir, 'node_modules', 'aws-lambda-ric', 'index.mjs');
  if (existsSync(entry) && existsSync(join(dir, 'node_modules', 'aws-lambda-ric', 'rapid-client.node'))) return entry;
  log(`installing aws-lambda-ric@${RIC_VERSION} into ${dir} (first run only; builds its native client, a few minutes)`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sluice-rehearsal-ric', private: true }));
  execFileSync(
    'npm',
    [
      'install',
      `aws-lambda-ric@${RIC_VERSION}`,
      '--foreground-scripts',
      '--no-audit',
      '--no-fund',
      '--engine-strict=false',
    ],
    {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  if (!existsSync(join(dir, 'node_modules', 'aws-lambda-ric', 'rapid-client.node'))) {
    throw new Error(`aws-lambda-ric installed without its native client (rapid-client.node) in ${dir}`);
  }
  return entry;
}

/** One execution environment: `aws-lambda-ric <handler>` in the task root, with only the function's environment. */
export function startRicEnvironment(options: {
  ric: string;
  taskRoot: string;
  handler: string;
  env: Record<string, string>;
  runtimeApi: string;
  onLine: (line: string, index: number) => void;
  index: number;
}): Environment {
  const child = spawn(process.execPath, [options.ric, options.handler], {
    cwd: options.taskRoot,
    env: {
      ...options.env,
      AWS_LAMBDA_RUNTIME_API: options.runtimeApi,
      LAMBDA_TASK_ROOT: options.taskRoot,
      _HANDLER: options.handler,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const s of [child.stdout, child.stderr]) eachLine(s, (line) => options.onLine(line, options.index));
  return {
    exited: new Promise<void>((done) => child.once('exit', () => done())),
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGKILL');
      }),
  };
}
