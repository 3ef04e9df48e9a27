/**
 * The dispatcher container: consumes every LiteTopic and runs the Suspend loop
 * toward the GPU endpoints. SIGTERM (ECS scale-in, deploys) stops taking messages,
 * lets running ones finish for SLUICE_DRAIN_MS (below the task's stop timeout), then
 * cuts their upstream calls and hands their messages back un-acked, and exits.
 */
import { sleep } from '../../lib/clock/clock.js';
import { createDrain } from '../../lib/dispatch/drain.js';
import type { DeadLetter } from '../../lib/queue/types.js';
import { createUpstreamClient } from '../../lib/upstream/client.js';
import { startMetricsServer } from '../dashboard/runtime.js';
import { startAggregate } from '../runtime/aggregate.js';
import { readConfig } from '../runtime/config.js';
import { startDispatching } from '../runtime/dispatching.js';
import { createLogger } from '../runtime/logger.js';
import { createParts } from '../runtime/parts.js';
import { systemClock } from '../runtime/system-clock.js';
import { createDispatcherTelemetry } from './telemetry.js';

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-dispatcher');
let settle: ((deadLetter: DeadLetter) => Promise<void>) | undefined;
const parts = await createParts(config, systemClock, log, {
  role: 'dispatcher',
  settleDeadLetter: (d) => settle?.(d) ?? Promise.resolve(),
});
log.info(parts.describe, 'parts');
const drain = createDrain({ clock: systemClock, drainMs: config.SLUICE_DRAIN_MS });
const rawUpstream = createUpstreamClient({ apiKey: config.SLUICE_UPSTREAM_API_KEY });
const upstream = drain.upstream(rawUpstream);
// The deployment-wide view: this dispatcher's flow, slots and traces go to the shared aggregate.
const aggregate = startAggregate({
  store: parts.store,
  clock: systemClock,
  log,
  role: 'dispatcher',
  policyHolder: parts.policyHolder,
  telemetry: () => telemetry,
});
const { telemetry, prometheus, ...emf } = createDispatcherTelemetry({
  clock: systemClock,
  log,
  policy: parts.policy,
  stage: config.SLUICE_STAGE,
  tenantLabel: aggregate.labels.label,
});
emf.start(config.SLUICE_EMF_INTERVAL_MS);
const metrics = await startMetricsServer({ prometheus, host: '0.0.0.0', port: config.SLUICE_METRICS_PORT });
const dispatching = startDispatching(parts, {
  clock: systemClock,
  log,
  upstream,
  concurrency: config.SLUICE_DISPATCH_CONCURRENCY,
  onEvent: (event) => {
    telemetry.onDispatch(event);
    if ('envelope' in event) aggregate.sink.onDispatch(event);
  },
  options: { upstreamTimeoutMs: config.SLUICE_UPSTREAM_TIMEOUT_MS },
  wrap: drain.handler,
});
settle = dispatching.settle;
const { subscription } = dispatching;
log.info(
  { concurrency: config.SLUICE_DISPATCH_CONCURRENCY, stage: config.SLUICE_STAGE, metrics: `${metrics.url}/metrics` },
  'dispatcher consuming',
);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, drainMs: config.SLUICE_DRAIN_MS }, 'draining');
    const outcome = await drain.run(() => subscription.close());
    log.info(outcome, outcome.drained ? 'drained' : 'drain time over: messages in flight handed back');
    // What is left is bounded too: a part that hangs on close must not keep the task past its stop timeout.
    emf.stop();
    const closing = Promise.all([rawUpstream.close(), metrics.close(), aggregate.close().then(() => parts.close())]);
    const closed = await Promise.race([
      closing.then(
        () => true,
        (error: unknown) => (log.warn({ err: String(error) }, 'a part failed to close'), true),
      ),
      sleep(systemClock, drain.exitMs).then(() => false),
    ]);
    if (!closed) log.warn({}, 'parts did not close in time; exiting anyway');
    process.exit(0);
  });
}
