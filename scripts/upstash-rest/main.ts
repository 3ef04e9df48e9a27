/**
 * tsx scripts/upstash-rest/main.ts --redis redis://127.0.0.1:6379 --port 8079 --token T
 */
import { parseArgs } from 'node:util';
import { startUpstashRestServer } from './server.ts';

const { values } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    port: { type: 'string', default: '0' },
    token: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
if (!values.token) throw new Error('--token is required');

const server = await startUpstashRestServer({
  redisUrl: values.redis,
  port: Number.parseInt(values.port, 10),
  token: values.token,
  host: values.host,
  log: (message) => process.stderr.write(`[upstash-rest] ${message}\n`),
});
process.stdout.write(`${server.url}\n`);
const shutdown = () => void server.close().then(() => process.exit(0));
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
