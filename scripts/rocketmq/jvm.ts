import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';

// Flags the RocketMQ 5.x servers need on JDK 17: they reach into NIO and ref
// internals (direct buffers, cleaners) that are closed by default since JDK 16.
export const JDK17_OPENS = [
  '--add-opens=java.base/java.lang=ALL-UNNAMED',
  '--add-opens=java.base/java.lang.reflect=ALL-UNNAMED',
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED',
  '--add-opens=java.base/java.util=ALL-UNNAMED',
  '--add-opens=java.base/java.util.concurrent=ALL-UNNAMED',
  '--add-exports=java.base/sun.nio.ch=ALL-UNNAMED',
];

export interface JavaProcessOptions {
  readonly name: string;
  readonly libDir: string;
  readonly mainClass: string;
  readonly args: readonly string[];
  readonly jvmArgs: readonly string[];
  /** stdout and stderr of the JVM go here, so a failed start can be explained. */
  readonly logFile: string;
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
}

export interface JavaProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (or signal name) once the JVM is gone. */
  readonly exited: Promise<string>;
  isRunning(): boolean;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Starts a JVM whose classpath is every jar in `libDir`. Children are killed when
 * this Node process exits, so a crashed test run does not leave brokers behind
 * holding ports and disk.
 */
export function startJava(opts: JavaProcessOptions): JavaProcess {
  installExitHook();
  const out = openSync(opts.logFile, 'a');
  const child = spawn(
    'java',
    [...JDK17_OPENS, ...opts.jvmArgs, '-cp', join(opts.libDir, '*'), opts.mainClass, ...opts.args],
    { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', out, out] },
  );
  closeSync(out);
  running.add(child);
  let alive = true;
  const exited = new Promise<string>((resolve) => {
    child.on('exit', (code, signal) => {
      alive = false;
      running.delete(child);
      resolve(signal ?? String(code));
    });
    child.on('error', () => {
      alive = false;
      running.delete(child);
      resolve('spawn-error');
    });
  });
  return { name: opts.name, child, logFile: opts.logFile, exited, isRunning: () => alive };
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Asks the JVM to shut down (its shutdown hooks flush the store), then forces it. */
export async function stopJava(proc: JavaProcess, graceMs = 15_000): Promise<void> {
  if (!proc.isRunning()) return;
  proc.child.kill('SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
  if ((await Promise.race([proc.exited, timer])) === 'timeout') {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

export function killJava(proc: JavaProcess): Promise<string> {
  if (proc.isRunning()) proc.child.kill('SIGKILL');
  return proc.exited;
}

export function tailLog(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export function portAccepts(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Polls `check` until it returns true. Gives up early when the process died, with
 * the end of its log in the error, because a JVM that exits at startup (bad
 * config, port taken) would otherwise look like a slow start.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; proc?: JavaProcess; intervalMs?: number },
): Promise<void> {
  const deadline = performance.now() + opts.timeoutMs;
  for (;;) {
    if (opts.proc && !opts.proc.isRunning()) {
      throw new Error(
        `${opts.proc.name} exited while waiting for ${what}; log ${opts.proc.logFile}:\n${tailLog(opts.proc.logFile)}`,
      );
    }
    if (await check()) return;
    if (performance.now() > deadline) {
      const log = opts.proc ? `; log ${opts.proc.logFile}:\n${tailLog(opts.proc.logFile)}` : '';
      throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${what}${log}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 250));
  }
}
