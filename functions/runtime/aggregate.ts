/**
 * Wires a process into the deployment-wide aggregate: a sink fed by its flow
 * events and flushed every second, the deployment view its dashboard serves,
 * and the deployment's decision of which tenants metrics name.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock } from '../../lib/clock/clock.js';
import type { PolicyHolder } from '../../lib/policy/holder.js';
import type { AggregateOps } from '../../lib/store/aggregate.js';
import { createSharedLabels } from '../../lib/telemetry/aggregate/labels.js';
import { createAggregateSink, type AggregateSink } from '../../lib/telemetry/aggregate/sink.js';
import { createDeploymentView } from '../../lib/telemetry/aggregate/view.js';
import type { Logger } from '../../lib/telemetry/log.js';
import type { Telemetry } from '../../lib/telemetry/telemetry.js';

export interface AggregateWiring {
  readonly sink: AggregateSink;
  readonly view: ReturnType<typeof createDeploymentView>;
  readonly labels: ReturnType<typeof createSharedLabels>;
  close(): Promise<void>;
}

export function newInstanceId(role: string): string {
  return `${role}-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

export function startAggregate(options: {
  readonly store: AggregateOps;
  readonly clock: Clock;
  readonly log: Logger;
  readonly role: string;
  readonly instance?: string;
  readonly policyHolder: PolicyHolder;
  /** This process's telemetry, for the gauges and alerts it publishes; set later when built after. */
  readonly telemetry?: () => Telemetry | undefined;
  readonly topTenants?: number;
}): AggregateWiring {
  const { store, clock, log, policyHolder } = options;
  let lastError = Number.NEGATIVE_INFINITY;
  const sink = createAggregateSink({
    store,
    clock,
    instance: options.instance ?? newInstanceId(options.role),
    role: options.role,
    describe: () => {
      const telemetry = options.telemetry?.();
      const slots: Record<string, Record<string, number>> = {};
      const pace: Record<string, number> = {};
      for (const g of telemetry?.gauges() ?? []) {
        if (g.name === 'gpu_slots_in_use' && g.value > 0)
          (slots[String(g.labels.model)] ??= {})[String(g.labels.tier)] = g.value;
        if (g.name === 'pace_factor') pace[String(g.labels.model)] = g.value;
      }
      const alerts = (telemetry?.alerts.active() ?? [])
        .slice(0, 10)
        .map(({ at, alert, key, message, repeats }) => ({ at, alert, key, message, repeats }));
      const digest = createHash('sha256').update(JSON.stringify(policyHolder.current())).digest('hex').slice(0, 12);
      return { policyCheckedAt: policyHolder.checkedAt, policyDigest: digest, slots, pace, alerts };
    },
    onError: (error) => {
      const now = clock.now();
      if (now - lastError < 60_000) return;
      lastError = now;
      log.warn({ err: String(error) }, 'aggregate flush failed; this second of flow is dropped');
    },
  });
  const view = createDeploymentView({ store, clock, policy: () => policyHolder.current() });
  const labels = createSharedLabels({ store, clock, size: options.topTenants ?? 10 });
  let closed = false;
  let cancel: (() => void) | undefined;
  const relabel = () => {
    if (closed) return;
    cancel = clock.setTimer(
      5_000,
      () =>
        void labels
          .refresh()
          .catch(() => undefined)
          .finally(relabel),
    );
  };
  sink.start();
  void labels.refresh().catch(() => undefined);
  relabel();
  return {
    sink,
    view,
    labels,
    async close() {
      closed = true;
      cancel?.();
      await sink.close();
    },
  };
}
