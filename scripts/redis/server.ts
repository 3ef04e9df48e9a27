/**
 * A throwaway redis-server for tests, benchmarks and local runs: the Debian
 * package, on a free loopback port, in a temporary directory, with persistence
 * off. It can be stopped and started again on the same port and directory from
 * any process (a test worker included), because everything needed to restart it
 * is derived from (port, dir) — tests stop Redis mid-run to prove the edge
 * fails safe and recovers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type Log = (message: string) => void;

const defaultLog: Log = (message) => process.stderr.write(`[redis] ${message}\n`);

export const LOOPBACK = '127.0.0.1';

export function onPath(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' }).status === 0;
}

function runLogged(cmd: string, args: readonly string[], log: Log): Promise<number> {
  return new Promise((resolve, reject) => {
    log(`$ ${cmd} ${args.join(' ')}`);
    const child = spawn(cmd, args, {
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

/**
 * Installs the Debian redis-server package when `redis-server` is missing. Other
 * sessions on the same machine may be running apt at the same moment, so the
 * dpkg lock is waited for and each step is retried a few times.
 */
export async function ensureRedisServerInstalled(log: Log = defaultLog): Promise<void> {
  if (onPath('redis-server')) return;
  log('redis-server is not on PATH; installing the Debian package (apt-get update && apt-get install -y redis-server)');
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const sudo = root ? [] : ['sudo', '-n'];
  const lockWait = ['-o', 'DPkg::Lock::Timeout=180'];
  const steps: string[][] = [
    [...sudo, 'apt-get', ...lockWait, 'update'],
    [...sudo, 'apt-get', ...lockWait, 'install', '-y', '--no-install-recommends', 'redis-server'],
  ];
  for (const step of steps) {
    let code = 1;
    for (let attempt = 1; attempt <= 3 && code !== 0; attempt++) {
      code = await runLogged(step[0]!, step.slice(1), log);
      if (code !== 0 && attempt < 3) {
        log(`exit ${code}; retrying in ${attempt * 5}s (apt may be locked by another session)`);
        await delay(attempt * 5000);
      }
    }
    if (code !== 0) throw new Error(`${step.join(' ')} failed with exit code ${code}`);
  }
  if (!onPath('redis-server')) throw new Error('redis-server still not on PATH after apt-get install');
  log('redis-server installed');
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Asks the kernel for a free loopback port by binding port 0. */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, LOOPBACK, () => {
      const address = srv.address();
      srv.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

/** Encodes one command as a RESP array of bulk strings. */
function resp(args: readonly string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/**
 * Sends one command on a fresh connection and returns the first reply line.
 * A raw socket rather than a client library: ping and shutdown must work while
 * Redis is half up or going away, where a pooled client would queue or retry.
 */
export function rawCommand(port: number, args: readonly string[], timeoutMs = 1000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host: LOOPBACK });
    let buffer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${args[0]} on port ${port} timed out`));
    }, timeoutMs);
    socket.on('connect', () => socket.write(resp(args)));
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      const end = buffer.indexOf('\r\n');
      if (end >= 0) {
        clearTimeout(timer);
        socket.destroy();
        resolve(buffer.slice(0, end));
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    // SHUTDOWN closes the connection without a reply.
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(buffer);
    });
  });
}

export async function ping(port: number): Promise<boolean> {
  try {
    return (await rawCommand(port, ['PING'], 500)) === '+PONG';
  } catch {
    return false;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await delay(25);
  }
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: LOOPBACK });
    socket.on('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export function redisServerArgs(port: number, dir: string): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    LOOPBACK,
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--pidfile',
    join(dir, 'redis.pid'),
    '--logfile',
    join(dir, 'redis.log'),
    // The benchmark and the REST server open many connections at once.
    '--maxclients',
    '10000',
  ];
}

export interface StartOptions {
  /** Defaults to a free port. Pass the old port to restart a stopped server. */
  readonly port?: number;
  /** Defaults to a new temporary directory. */
  readonly dir?: string;
  readonly log?: Log;
  readonly startTimeoutMs?: number;
  /** Appended to the standard arguments, e.g. ['--cluster-enabled', 'yes']. */
  readonly extraArgs?: readonly string[];
}

export interface RedisServerHandle {
  readonly port: number;
  readonly dir: string;
  readonly url: string;
  /** Pid of the process currently serving the port, if it is running. */
  pid(): number | undefined;
  /** SHUTDOWN NOSAVE; resolves once the port is closed. */
  stop(): Promise<void>;
  /** Starts it again on the same port and directory (after `stop`). */
  start(): Promise<void>;
  /** Stops it and removes the temporary directory. */
  close(): Promise<void>;
}

function readPid(dir: string): number | undefined {
  const file = join(dir, 'redis.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
  return Number.isFinite(pid) ? pid : undefined;
}

/**
 * Spawns redis-server detached from the calling process: a test worker that
 * restarts Redis may exit before the run ends, and Redis must outlive it. The
 * global teardown stops it by port, whoever started it last.
 */
export async function spawnRedisServer(
  port: number,
  dir: string,
  log: Log = defaultLog,
  timeoutMs = 10_000,
  extraArgs: readonly string[] = [],
): Promise<void> {
  if (await portOpen(port)) throw new Error(`port ${port} is already in use`);
  const child = spawn('redis-server', [...redisServerArgs(port, dir), ...extraArgs], {
    stdio: 'ignore',
    detached: true,
  });
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `redis-server exited early (code ${code}, signal ${signal}); see ${join(dir, 'redis.log')}`;
  });
  child.on('error', (err) => {
    exited = `redis-server failed to spawn: ${err.message}`;
  });
  child.unref();
  await waitUntil(
    async () => {
      if (exited) throw new Error(exited);
      return ping(port);
    },
    timeoutMs,
    `redis-server PING on port ${port}`,
  );
  log(`redis-server pid ${child.pid} ready on ${LOOPBACK}:${port} (dir ${dir})`);
}

/** Stops whatever redis-server serves `port`, without saving. */
export async function stopRedisServer(port: number, dir?: string, timeoutMs = 10_000): Promise<void> {
  if (!(await portOpen(port))) return;
  try {
    await rawCommand(port, ['SHUTDOWN', 'NOSAVE'], 2000);
  } catch {
    // Fall through to the pidfile below.
  }
  try {
    await waitUntil(async () => !(await portOpen(port)), Math.min(timeoutMs, 3000), `port ${port} to close`);
  } catch (err) {
    const pid = dir ? readPid(dir) : undefined;
    if (pid === undefined) throw err;
    process.kill(pid, 'SIGKILL');
    await waitUntil(async () => !(await portOpen(port)), timeoutMs, `port ${port} to close after SIGKILL`);
  }
}

export async function startRedisServer(options: StartOptions = {}): Promise<RedisServerHandle> {
  const log = options.log ?? defaultLog;
  await ensureRedisServerInstalled(log);
  const port = options.port ?? (await findFreePort());
  const ownsDir = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  await spawnRedisServer(port, dir, log, options.startTimeoutMs, options.extraArgs);
  return {
    port,
    dir,
    url: `redis://${LOOPBACK}:${port}`,
    pid: () => readPid(dir),
    stop: () => stopRedisServer(port, dir),
    start: () => spawnRedisServer(port, dir, log, options.startTimeoutMs, options.extraArgs),
    close: async () => {
      await stopRedisServer(port, dir);
      if (ownsDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A handle on a server some other process started (tests get port and dir via inject). */
export function attachRedisServer(port: number, dir: string, log: Log = defaultLog): RedisServerHandle {
  return {
    port,
    dir,
    url: `redis://${LOOPBACK}:${port}`,
    pid: () => readPid(dir),
    stop: () => stopRedisServer(port, dir),
    start: () => spawnRedisServer(port, dir, log),
    close: () => stopRedisServer(port, dir),
  };
}
