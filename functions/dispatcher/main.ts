/**
 * The dispatcher container: consumes every LiteTopic and runs the Suspend loop
 * toward the GPU endpoints. SIGTERM (ECS scale-in, deploys) stops taking messages
 * and lets running ones finish before exit.
 */
import { createDispatcher, settleDeadLetter } from '../../lib/dispatch/dispatcher.js';
import type { DeadLetter } from '../../lib/queue/types.js';
import { createUpstreamClient } from '../../lib/upstream/client.js';
import { startMetricsServer } from '../dashboard/runtime.js';
import { readConfig } from '../runtime/config.js';
import { newLeaseId } from '../runtime/ids.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { createDispatcherTelemetry } from './telemetry.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-dispatcher');
let settle: ((deadLetter: DeadLetter) => Promise<void>) | undefined;
const parts = await createParts(config, systemClock, log, { role: 'dispatcher', settleDeadLetter: (d) => settle?.(d) ?? Promise.resolve() });
log.info(parts.describe, 'parts');
const upstream = createUpstreamClient({ apiKey: config.SLUICE_UPSTREAM_API_KEY });
const { telemetry, prometheus, ...emf } = createDispatcherTelemetry({ clock: systemClock, log, policy: parts.policy, stage: config.SLUICE_STAGE });
emf.start(config.SLUICE_EMF_INTERVAL_MS);
const metrics = await startMetricsServer({ prometheus, host: '0.0.0.0', port: config.SLUICE_METRICS_PORT });
const dispatchDeps = {
  clock: systemClock,
  store: parts.store,
  results: parts.results,
  upstream,
  policy: parts.policy,
  log,
  newId: newLeaseId,
  deadLetters: parts.deadLetters,
  onEvent: telemetry.onDispatch,
};
const handler = createDispatcher(dispatchDeps);
settle = (d) => settleDeadLetter(dispatchDeps, d);
const subscription = parts.queue.subscribe(handler, { concurrency: config.SLUICE_DISPATCH_CONCURRENCY });
log.info({ concurrency: config.SLUICE_DISPATCH_CONCURRENCY, stage: config.SLUICE_STAGE, metrics: `${metrics.url}/metrics` }, 'dispatcher consuming');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, drainMs: config.SLUICE_DRAIN_MS }, 'draining');
    // ECS kills the task at stopTimeout: leave before it, with the log line saying so.
    const drained = await Promise.race([
      subscription.close().then(() => true),
      new Promise<false>((resolve) => setTimeout(resolve, config.SLUICE_DRAIN_MS, false).unref()),
    ]);
    if (!drained) log.warn({ drainMs: config.SLUICE_DRAIN_MS }, 'drain window over: leaving running work to redelivery');
    await upstream.close();
    await metrics.close();
    emf.stop();
    await parts.close();
    log.info({}, 'drained');
    process.exit(0);
  });
}
