/**
 * `npm start`: Sluice on embedded defaults in one process, no other service needed.
 *   npm start -- --port 8787 --gpu-slots 8
 */
import { randomBytes } from 'node:crypto';
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
    'gpu-port': { type: 'string', default: process.env.SLUICE_GPU_PORT ?? '8788' },
    policy: { type: 'string', default: process.env.SLUICE_POLICY_FILE },
    rocketmq: { type: 'string', default: process.env.SLUICE_ROCKETMQ_ENDPOINTS },
    'log-level': { type: 'string', default: process.env.SLUICE_LOG_LEVEL ?? 'info' },
    'drain-ms': { type: 'string', default: process.env.SLUICE_DRAIN_MS ?? '30000' },
    'public-url': { type: 'string', default: process.env.SLUICE_PUBLIC_BASE_URL },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(
    'usage: npm start -- [--port 8787] [--host 127.0.0.1] [--policy policy.yaml] [--rocketmq host:8081] [--gpu-port 8788] [--gpu-slots 8] [--log-level info]\n' +
      '       [--drain-ms 30000] [--public-url https://llm.example.com]\n' +
      'env: SLUICE_PORT, SLUICE_HOST, SLUICE_POLICY_FILE, SLUICE_ROCKETMQ_ENDPOINTS, SLUICE_GPU_PORT, SLUICE_LOG_LEVEL, SLUICE_ADMIN_KEY,\n' +
      '     SLUICE_DRAIN_MS, SLUICE_PUBLIC_BASE_URL\n' +
      '--drain-ms: on Ctrl-C or SIGTERM, how long queued and running requests may still be served; then waiting clients get 503.\n' +
      '--rocketmq: a RocketMQ 5.5 proxy (gRPC) with the LITE topic sluice-requests and the wildcard group sluice-dispatchers\n' +
      '            (tsx scripts/rocketmq/main.ts starts one locally).\n' +
      '--policy: a YAML or JSON policy file, created with the demo policy if missing, reloaded when it changes.',
  );
  process.exit(0);
}

const log = createLogger(values['log-level']);
// A fresh admin key each start unless one is given: the local admin API is never open by default.
const adminKey = process.env.SLUICE_ADMIN_KEY ?? `sk-sluice-admin-${randomBytes(12).toString('hex')}`;
const sluice = await startLocalSluice({
  clock: systemClock,
  log,
  host: values.host,
  port: Number(values.port),
  gpu: { slots: Number(values['gpu-slots']) },
  gpuPort: Number(values['gpu-port']),
  policyFile: values.policy,
  rocketmq: values.rocketmq ? { endpoints: values.rocketmq } : undefined,
  adminKey,
  drainMs: Number(values['drain-ms']),
  edge: values['public-url'] ? { publicBaseUrl: values['public-url'] } : undefined,
});

console.log(`Sluice is running at ${sluice.url} (simulated GPU at ${sluice.gpuUrl}; queue: ${values.rocketmq ? `RocketMQ at ${values.rocketmq}` : 'embedded'})

Dashboard: ${sluice.url}/dashboard#key=${encodeURIComponent(adminKey)}
  (who is bursting, queues per LiteTopic, absorbed vs refused, GPU slots, alerts; pause/resume)
Metrics:   ${sluice.url}/metrics (Prometheus)

Demo API keys:
  realtime tier, tenant "demo":  ${DEMO_KEYS.realtime}
  batch tier, tenant "demo":     ${DEMO_KEYS.batch}
  realtime tier, tenant "acme":  ${DEMO_KEYS.other}

Admin key (limits, bookings, pause/resume under ${sluice.url}/admin/v1): ${adminKey}
Policy: ${values.policy ? `${values.policy} (edit it; changes apply without a restart)` : 'built-in demo policy (pass --policy FILE to keep and edit it)'}

Try it:
  curl -s ${sluice.url}/v1/chat/completions -H 'Authorization: Bearer ${DEMO_KEYS.realtime}' -H 'Content-Type: application/json' -d '{"model":"${DEMO_MODEL}","messages":[{"role":"user","content":"Hello, Sluice"}]}'

Ctrl-C serves what is queued for up to ${values['drain-ms']} ms, answers the rest and exits.`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) process.exit(130);
    stopping = true;
    console.log(
      `\nDraining: no new requests; queued ones are served for up to ${values['drain-ms']} ms (Ctrl-C again to force)...`,
    );
    sluice.close().then(
      (outcome) => {
        console.log(
          `Stopped after ${outcome.elapsedMs} ms (${outcome.drained ? 'everything served' : 'drain time over; waiting clients answered 503'}).`,
        );
        process.exit(0);
      },
      (error) => {
        console.error('Shutdown failed:', error);
        process.exit(1);
      },
    );
  });
}
