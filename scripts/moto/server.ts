/**
 * moto's server (PyPI `moto[server]`) speaks the real AWS protocols; Sluice tests
 * its SSM policy source against it. Installed into a private virtualenv under
 * .cache/ on first use, so a clean machine needs nothing but Python.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');
const VENV = join(ROOT, '.cache', 'moto-venv');
const BIN = join(VENV, 'bin', 'moto_server');

export interface MotoServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

export function ensureMoto(log: (m: string) => void = () => {}): string {
  if (existsSync(BIN)) return BIN;
  log(`installing moto[server] into ${VENV} (first run only, about a minute)...`);
  execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'inherit' });
  execFileSync(join(VENV, 'bin', 'pip'), ['install', '--quiet', 'moto[server]>=5,<6'], { stdio: 'inherit' });
  if (!existsSync(BIN)) throw new Error(`moto installed but ${BIN} is missing`);
  return BIN;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => res(port));
    });
  });
}

export async function startMoto(log: (m: string) => void = () => {}): Promise<MotoServer> {
  const bin = ensureMoto(log);
  const port = await freePort();
  const child: ChildProcess = spawn(bin, ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}): ${stderr}`);
    try {
      const res = await fetch(`${url}/moto-api/`);
      if (res.status < 500) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not answer on ${url} within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  log(`moto listening on ${url}`);
  return {
    url,
    port,
    close: () =>
      new Promise((res) => {
        if (child.exitCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
      }),
  };
}
