import { createServer } from 'node:net';

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A loopback port free right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port p where p, p-2 and p+1 are all free: the broker derives its fast-remoting
 * port (p-2) and HA port (p+1) from its listen port.
 */
export async function freeBrokerPort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const all = await Promise.all([base - 2, base, base + 1].map(canBind));
    if (all.every(Boolean)) return base;
  }
  throw new Error('no free port triple for the broker');
}
