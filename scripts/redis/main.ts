/**
 * tsx scripts/redis/main.ts install
 * tsx scripts/redis/main.ts start [--port N] [--dir D]   (runs until Ctrl-C, then stops Redis)
 * tsx scripts/redis/main.ts stop --port N [--dir D]
 */
import { parseArgs } from 'node:util';
import { ensureRedisServerInstalled, startRedisServer, stopRedisServer } from './server.ts';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { port: { type: 'string' }, dir: { type: 'string' } },
});
const command = positionals[0] ?? 'start';
const port = values.port === undefined ? undefined : Number.parseInt(values.port, 10);

if (command === 'install') {
  await ensureRedisServerInstalled();
} else if (command === 'stop') {
  if (port === undefined) throw new Error('stop needs --port');
  await stopRedisServer(port, values.dir);
} else if (command === 'start') {
  const server = await startRedisServer({ port, dir: values.dir });
  process.stdout.write(`${server.url}\n`);
  const shutdown = async () => {
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  // Keeps the process alive: redis-server is detached and unref'd.
  setInterval(() => {}, 1 << 30);
} else {
  throw new Error(`unknown command ${command}; use install, start or stop`);
}
