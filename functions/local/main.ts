/**
 * `npm start`: Sluice on embedded defaults in one process, no other service needed.
 *   npm start -- --port 8787 --gpu-slots 8
 */
import { parseArgs } from 'node:util';
import { systemClock } from '../runtime/system-clock.js';
import { createLogger } from '../runtime/logger.js';
import { DEMO_KEYS, DEMO_MODEL } from './demo-policy.js';
import { startLocalSluice } from './sluice.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.SLUICE_PORT ?? '8787' },
    host: { type: 'string', default: process.env.SLUICE_HOST ?? '127.0.0.1' },
    'gpu-slots': { type: 'string', default: '8' },
    'log-level': { type: 'string', default: process.env.SLUICE_LOG_LEVEL ?? 'info' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log('usage: npm start -- [--port 8787] [--host 127.0.0.1] [--gpu-slots 8] [--log-level info]\nenv: SLUICE_PORT, SLUICE_HOST, SLUICE_LOG_LEVEL');
  process.exit(0);
}

const log = createLogger(values['log-level']);
const sluice = await startLocalSluice({
  clock: systemClock,
  log,
  host: values.host,
  port: Number(values.port),
  gpu: { slots: Number(values['gpu-slots']) },
});

console.log(`Sluice is running at ${sluice.url} (simulated GPU at ${sluice.gpuUrl})

Demo API keys:
  realtime tier, tenant "demo":  ${DEMO_KEYS.realtime}
  batch tier, tenant "demo":     ${DEMO_KEYS.batch}
  realtime tier, tenant "acme":  ${DEMO_KEYS.other}

Try it:
  curl -s ${sluice.url}/v1/chat/completions -H 'Authorization: Bearer ${DEMO_KEYS.realtime}' -H 'Content-Type: application/json' -d '{"model":"${DEMO_MODEL}","messages":[{"role":"user","content":"Hello, Sluice"}]}'

Ctrl-C drains in-flight requests and exits.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.log('\nDraining in-flight requests (Ctrl-C again to force)...');
    sluice.close().then(
      () => {
        console.log('Stopped.');
        process.exit(0);
      },
      (error) => {
        console.error('Shutdown failed:', error);
        process.exit(1);
      },
    );
  });
}
