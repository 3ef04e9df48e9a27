/**
 * The dispatcher container: consumes every LiteTopic and runs the Suspend loop
 * toward the GPU endpoints. SIGTERM (ECS scale-in, deploys) stops taking messages
 * and lets running ones finish before exit.
 */
import type { DeadLetter } from '../../lib/queue/types.js';
import { createUpstreamClient } from '../../lib/upstream/client.js';
import { createPrometheusTelemetry, startMetricsServer } from '../dashboard/runtime.js';
import { readConfig } from '../runtime/config.js';
import { startDispatching } from '../runtime/dispatching.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-dispatcher');
let settle: ((deadLetter: DeadLetter) => Promise<void>) | undefined;
const parts = await createParts(config, systemClock, log, { role: 'dispatcher', settleDeadLetter: (d) => settle?.(d) ?? Promise.resolve() });
log.info(parts.describe, 'parts');
const upstream = createUpstreamClient();
const { telemetry, prometheus } = createPrometheusTelemetry({ clock: systemClock, log, policy: parts.policy });
const metrics = await startMetricsServer({ prometheus, host: '0.0.0.0', port: config.SLUICE_METRICS_PORT });
const dispatching = startDispatching(parts, { clock: systemClock, log, upstream, concurrency: config.SLUICE_DISPATCH_CONCURRENCY, onEvent: telemetry.onDispatch });
settle = dispatching.settle;
const { subscription } = dispatching;
log.info({ concurrency: config.SLUICE_DISPATCH_CONCURRENCY, stage: config.SLUICE_STAGE, metrics: `${metrics.url}/metrics` }, 'dispatcher consuming');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'draining');
    await subscription.close();
    await upstream.close();
    await metrics.close();
    await parts.close();
    log.info({}, 'drained');
    process.exit(0);
  });
}
