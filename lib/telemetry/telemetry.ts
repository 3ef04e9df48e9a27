/**
 * The telemetry core: listens to admission decisions (edge) and dispatch events
 * (dispatcher), turns them into metrics for every sink (Prometheus, CloudWatch
 * EMF), raises alerts, and keeps what the dashboard's live view reads: the
 * recent flow in time buckets (flow-window.ts), LiteTopic depths (lite-topic-depths.ts),
 * GPU calls in flight (calls-in-flight.ts) and near-limit warnings (recent-warnings.ts);
 * the view's rows are built as the deployment's aggregate builds them (live-state.ts).
 *
 * - Labels are bounded: the busiest `topTenants` tenants are named, the rest are
 *   "other" (cardinality.ts). Accounts and LiteTopics never become labels; the
 *   dashboard shows them from the in-memory live view.
 * - "Absorbed" = a request that waited in its LiteTopic at least `absorbAfterMs`
 *   (the broker's Suspend granularity: it was held, not passed straight through)
 *   and then completed. It is the burst Sluice turned into a stream instead of 429s.
 * - GPU slots in use are the calls in flight, per tier and model, set against each
 *   tier's reserved share of the model's slots.
 * - Time comes from the injected clock; nothing here reads the environment.
 */
import type { Clock } from '../clock/clock.js';
import type { DispatchEvent } from '../dispatch-events.js';
import type { Envelope } from '../envelope.js';
import { resolveLimits } from '../policy/resolve.js';
import type { Policy } from '../policy/schema.js';
import { own } from '../lookup.js';
import { liteTopicName } from '../queue/lite-topic-name.js';
import type { DeadLetter } from '../queue/types.js';
import { Alerts, type AlertRecord } from './alerts.js';
import { CallsInFlight } from './calls-in-flight.js';
import type { CounterName, GaugeSample, HistogramName, Labels, MetricSink } from './catalog.js';
import { waitStages } from './wait-stages.js';
import { OTHER, TopNLabels } from './cardinality.js';
import { FlowWindow } from './flow-window.js';
import { gpuRows } from './gpu-view.js';
import { bookingsOf, deepestLiteTopics, flowRows, pausedIds, type LiteTopicRow, type LiveState } from './live-state.js';
import { LiteTopicDepths, type LiteTopicDepth } from './lite-topic-depths.js';
import type { Logger } from './log.js';
import { RecentWarnings } from './recent-warnings.js';

/** What the edge reports per admission decision (structurally functions/edge/deps.ts AdmissionEvent). */
export interface AdmissionInfo {
  readonly outcome: 'admitted' | 'rejected';
  readonly account: string;
  readonly tenant: string;
  readonly tier: string;
  readonly model: string;
  readonly reason?: string;
  readonly warning?: string;
  /** For degrade-tier admissions past the soft quota: how they are slowed (counted when the edge reports it). */
  readonly degraded?: string;
  readonly id: string;
}

export interface TelemetryOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly policy: () => Policy;
  readonly sinks?: readonly MetricSink[];
  /** Messages waiting in a LiteTopic, when the queue can tell (the embedded engine). Else counted from events. */
  readonly depth?: (liteTopic: string) => number;
  /** Tenants named in metric labels; the rest are "other". */
  readonly topTenants?: number;
  /** The deployment's decision of which tenants are named (lib/telemetry/aggregate/labels.ts) instead of this process's. */
  readonly tenantLabel?: (tenant: string) => string;
  readonly absorbAfterMs?: number;
  readonly alertCooldownMs?: number;
  /** Window over which "bursting now" is measured. */
  readonly burstWindowMs?: number;
  /** How far back the per-tier history goes, and its step. */
  readonly historyMs?: number;
  readonly bucketMs?: number;
  /** Tiers whose near-limit warnings are alerts; default: the tiers of highest weight. */
  readonly priorityTiers?: readonly string[];
}

export {
  bookingsOf,
  HISTORY_SERIES,
  type Booking,
  type HistorySeries,
  type LiveState,
  type WarningRecord,
} from './live-state.js';

export interface Telemetry {
  onAdmission(event: AdmissionInfo): void;
  onDispatch(event: DispatchEvent): void;
  /**
   * A message the queue engine dead-lettered after its own attempt limit. Only for
   * processes that do not settle such messages through the dispatcher
   * (`settleDeadLetter` emits a `failed` event, which is counted already).
   */
  onQueueDeadLetter(deadLetter: DeadLetter): void;
  /** An envelope went to the spillover queue (broker unreachable). */
  recordSpill(envelope: Pick<Envelope, 'tier' | 'tenant' | 'model' | 'liteTopic'>): void;
  /** Congestion control changed a model's pace factor (1 = full pace). */
  recordPaceChange(change: { model: string; factor: number; reason?: string }): void;
  /** Current gauges (depth, GPU slots, pace), labels bounded. */
  gauges(): GaugeSample[];
  /** The dashboard's view. */
  live(limit?: number): LiveState;
  readonly alerts: Alerts;
  /** The label a tenant gets in metrics right now. */
  tenantLabel(tenant: string): string;
}

export function createTelemetry(options: TelemetryOptions): Telemetry {
  const { clock, log } = options;
  const sinks = options.sinks ?? [];
  const absorbAfterMs = options.absorbAfterMs ?? 50;
  const burstWindowMs = options.burstWindowMs ?? 10_000;
  const bucketMs = options.bucketMs ?? 1_000;
  const historyMs = options.historyMs ?? 5 * 60_000;
  const tenants = new TopNLabels({ clock, size: options.topTenants ?? 10 });
  const alerts = new Alerts({ clock, log, sinks, cooldownMs: options.alertCooldownMs });

  const tenantLabel = (tenant: string) => (options.tenantLabel ? options.tenantLabel(tenant) : tenants.label(tenant));
  const topics = new LiteTopicDepths({ clock, depth: options.depth });
  const inFlight = new CallsInFlight(clock);
  const pace = new Map<string, number>();
  /** Slots of models whose servers' metrics set them (lib/dispatch/flow/saturation.ts), as last reported. */
  const slotsRead = new Map<string, number>();
  const flow = new FlowWindow({ clock, burstWindowMs, historyMs, bucketMs });
  const warnings = new RecentWarnings();
  const totals: Record<string, number> = {};

  function count(name: CounterName, labels: Labels, value = 1) {
    totals[name] = (totals[name] ?? 0) + value;
    for (const s of sinks) s.count(name, labels, value);
  }
  function observe(name: HistogramName, labels: Labels, ms: number) {
    for (const s of sinks) s.observe(name, labels, Math.max(0, ms));
  }
  for (const s of sinks) s.bindGauges?.(() => gauges());

  /** Labels of one event; each event also counts towards its tenant's place in the top N. */
  function labelsOf(e: { tier: string; tenant: string; model: string }): Labels {
    return {
      tier: e.tier,
      tenant: options.tenantLabel ? options.tenantLabel(e.tenant) : tenants.touch(e.tenant),
      model: e.model,
    };
  }

  function priorityTiers(policy: Policy): readonly string[] {
    if (options.priorityTiers) return options.priorityTiers;
    const weights = Object.values(policy.tiers).map((t) => t.weight);
    const top = Math.max(...weights);
    return Object.entries(policy.tiers)
      .filter(([, t]) => t.weight === top)
      .map(([n]) => n);
  }

  function checkExpectedWait(policy: Policy, t: LiteTopicDepth) {
    const tier = own(policy.tiers, t.tier);
    const account = t.account ? own(policy.accounts, t.account) : undefined;
    const { liteTopic, depth } = t;
    if (!tier || !account || depth === 0) return;
    const rate = resolveLimits(policy, account, t.model).accountModel.rate;
    const expectedWaitMs = Math.round((depth / rate) * 1000);
    if (expectedWaitMs > tier.maxQueueWaitMs) {
      alerts.raise(
        'queue-wait-above-max',
        liteTopic,
        {
          tier: t.tier,
          tenant: t.tenant,
          model: t.model,
          liteTopic,
          depth,
          expectedWaitMs,
          maxQueueWaitMs: tier.maxQueueWaitMs,
          basis: 'expected',
        },
        `${liteTopic} expects ${expectedWaitMs} ms for ${depth} waiting, max ${tier.maxQueueWaitMs} ms`,
      );
    }
  }

  function checkObservedWait(envelope: Envelope, waitMs: number) {
    const max = own(options.policy().tiers, envelope.tier)?.maxQueueWaitMs;
    if (max === undefined || waitMs < max) return;
    alerts.raise(
      'queue-wait-above-max',
      envelope.liteTopic,
      {
        tier: envelope.tier,
        tenant: envelope.tenant,
        model: envelope.model,
        liteTopic: envelope.liteTopic,
        waitMs,
        maxQueueWaitMs: max,
        basis: 'observed',
      },
      `${envelope.liteTopic} waited ${waitMs} ms, max ${max} ms`,
    );
  }

  function onAdmission(e: AdmissionInfo) {
    const labels = labelsOf(e);
    const policy = options.policy();
    if (e.outcome === 'admitted') {
      count('admitted', labels);
      flow.offered(e, 'admitted');
      flow.outcome(e.tier, 'admitted');
      const t = topics.admitted(liteTopicName(e), e, e.account);
      if (e.degraded) count('degraded', labels);
      if (e.warning) {
        count('warned', labels);
        flow.offered(e, 'warned');
        const { tier, tenant, account, model } = e;
        warnings.add({ at: clock.now(), tier, tenant, account, model, message: e.warning });
        if (priorityTiers(policy).includes(e.tier)) {
          alerts.raise(
            'realtime-near-limit',
            `${e.tier}|${e.account}|${e.model}`,
            { tier: e.tier, tenant: e.tenant, account: e.account, model: e.model, warning: e.warning },
            `${e.account} (${e.tenant}, ${e.tier}) ${e.warning}`,
          );
        }
      }
      checkExpectedWait(policy, t);
    } else {
      const reason = e.reason ?? 'unknown';
      count('refused', { ...labels, reason });
      flow.offered(e, 'refused');
      flow.outcome(e.tier, 'refused');
      // At a rate limit (not paused, not too large): the high-priority tier hit its cap.
      if (reason.includes(':') && priorityTiers(policy).includes(e.tier)) {
        alerts.raise(
          'realtime-near-limit',
          `${e.tier}|${e.account}|${e.model}`,
          { tier: e.tier, tenant: e.tenant, account: e.account, model: e.model, reason },
          `${e.account} (${e.tenant}, ${e.tier}) refused at ${reason}`,
        );
      }
    }
  }

  function deadLettered(envelope: Envelope, kind: string, reason: string) {
    count('dead_lettered', { ...labelsOf(envelope), kind });
    alerts.raise(
      'dead-letters',
      envelope.liteTopic,
      {
        tier: envelope.tier,
        tenant: envelope.tenant,
        model: envelope.model,
        liteTopic: envelope.liteTopic,
        kind,
        reason,
      },
      `${envelope.liteTopic}: ${reason}`,
    );
  }

  function onDispatch(event: DispatchEvent) {
    // Model-level events (pace changes, slots read from the servers) carry no envelope.
    if (event.type === 'congestion') return recordPaceChange({ model: event.model, factor: event.factor });
    if (event.type === 'capacity') return void slotsRead.set(event.model, event.slots);
    const envelope = event.envelope;
    for (const { stage, ms } of waitStages(event))
      observe('wait', { stage, tier: envelope.tier, model: envelope.model }, ms);
    // Deliveries and slot waits only feed the wait split; what follows counts outcomes.
    if (event.type === 'delivered' || event.type === 'awaiting-slot') return;
    const labels = labelsOf(envelope);
    topics.seen(envelope.liteTopic, envelope, envelope.account);
    switch (event.type) {
      case 'suspended':
        count('suspended', { ...labels, cause: event.cause });
        break;
      case 'started':
        count('dispatched', labels);
        observe('queue_wait', labels, event.queueWaitMs);
        inFlight.started(envelope.id, {
          tier: envelope.tier,
          model: envelope.model,
          held: event.queueWaitMs >= absorbAfterMs,
        });
        checkObservedWait(envelope, event.queueWaitMs);
        break;
      case 'completed': {
        const started = inFlight.ended(envelope.id);
        count('completed', labels);
        observe('end_to_end', labels, event.totalMs);
        flow.outcome(envelope.tier, 'completed');
        if (started?.held) {
          count('absorbed', labels);
          flow.outcome(envelope.tier, 'absorbed');
        }
        topics.finished(envelope.liteTopic, envelope);
        break;
      }
      case 'retrying':
        inFlight.ended(envelope.id);
        count('retried', labels);
        break;
      case 'failed':
        inFlight.ended(envelope.id);
        flow.outcome(envelope.tier, 'failed');
        deadLettered(envelope, 'failed', event.reason);
        topics.finished(envelope.liteTopic, envelope);
        break;
      case 'expired': {
        count('expired', labels);
        flow.outcome(envelope.tier, 'expired');
        const waited = clock.now() - envelope.enqueuedAt;
        deadLettered(envelope, 'expired', `expired after ${waited} ms in queue`);
        checkObservedWait(envelope, waited);
        topics.finished(envelope.liteTopic, envelope);
        break;
      }
    }
  }

  function onQueueDeadLetter(d: DeadLetter) {
    let envelope: Envelope | undefined;
    try {
      envelope = JSON.parse(d.message.body) as Envelope;
    } catch {
      envelope = undefined;
    }
    if (
      envelope &&
      typeof envelope.tier === 'string' &&
      typeof envelope.tenant === 'string' &&
      typeof envelope.model === 'string'
    ) {
      deadLettered({ ...envelope, liteTopic: d.message.liteTopic }, 'queue', d.reason);
      topics.finished(d.message.liteTopic, envelope);
    } else {
      count('dead_lettered', { tier: 'unknown', tenant: OTHER, model: 'unknown', kind: 'queue' });
      alerts.raise(
        'dead-letters',
        d.message.liteTopic,
        { liteTopic: d.message.liteTopic, kind: 'queue', reason: d.reason },
        `${d.message.liteTopic}: ${d.reason}`,
      );
    }
  }

  function recordSpill(envelope: Pick<Envelope, 'tier' | 'tenant' | 'model' | 'liteTopic'>) {
    count('spilled', labelsOf(envelope));
    alerts.raise(
      'spillover-in-use',
      'spillover',
      { tier: envelope.tier, tenant: envelope.tenant, model: envelope.model, liteTopic: envelope.liteTopic },
      `${envelope.liteTopic} spilled to the SQS spillover queue`,
    );
  }

  function recordPaceChange(change: { model: string; factor: number; reason?: string }) {
    const prev = pace.get(change.model) ?? 1;
    if (change.factor === prev) return;
    pace.set(change.model, change.factor);
    count('pace_changes', { model: change.model, direction: change.factor < prev ? 'down' : 'up' });
    log.info(
      { event: 'pace-change', model: change.model, from: prev, to: change.factor, reason: change.reason },
      'model pace changed',
    );
  }

  function gpuView(policy: Policy) {
    return gpuRows(policy, inFlight.slotsInUse(), pace, slotsRead);
  }

  function gauges(): GaugeSample[] {
    const out: GaugeSample[] = [];
    const depth = new Map<string, { labels: Labels; value: number }>();
    for (const t of topics.depths()) {
      const labels = { tier: t.tier, tenant: tenantLabel(t.tenant), model: t.model };
      const key = `${labels.tier}\u0000${labels.tenant}\u0000${labels.model}`;
      const d = depth.get(key) ?? { labels, value: 0 };
      d.value += t.depth;
      depth.set(key, d);
    }
    for (const d of depth.values()) out.push({ name: 'reservoir_depth', labels: d.labels, value: d.value });
    for (const g of gpuView(options.policy())) {
      out.push({ name: 'gpu_slots_capacity', labels: { model: g.model }, value: g.capacity });
      out.push({ name: 'pace_factor', labels: { model: g.model }, value: g.paceFactor });
      for (const t of g.tiers) {
        out.push({ name: 'gpu_slots_in_use', labels: { model: g.model, tier: t.tier }, value: t.inUse });
        out.push({ name: 'gpu_slots_reserved', labels: { model: g.model, tier: t.tier }, value: t.reserved });
      }
    }
    return out;
  }

  function live(limit = 10): LiveState {
    const now = clock.now();
    const policy = options.policy();
    const queuedByTenant = new Map<string, number>();
    const liteTopics: LiteTopicRow[] = [];
    for (const t of topics.depths()) {
      const { liteTopic, tier, tenant, model, depth } = t;
      if (depth === 0) continue;
      queuedByTenant.set(tenant, (queuedByTenant.get(tenant) ?? 0) + depth);
      liteTopics.push({
        liteTopic,
        tier,
        tenant,
        model,
        depth,
        maxQueueWaitMs: own(policy.tiers, tier)?.maxQueueWaitMs,
      });
      // Expected waits are checked on each read too, so a LiteTopic that stopped
      // receiving (but still holds a backlog) keeps being watched.
      checkExpectedWait(policy, t);
    }
    const rows = flowRows({ policy, windowMs: burstWindowMs, ...flow.offeredLately(), queuedByTenant, limit });
    return {
      now,
      burstWindowMs,
      tenants: rows.tenants,
      accounts: rows.accounts,
      liteTopics: deepestLiteTopics(liteTopics, limit),
      history: flow.historyView(Object.keys(policy.tiers)),
      gpu: gpuView(policy),
      totals: { ...totals },
      paused: pausedIds(policy),
      bookings: bookingsOf(policy, now),
      warnings: warnings.latest(20),
      alerts: alerts.recent().slice(0, 20),
      activeAlerts: alerts.active(),
    };
  }

  // Telemetry must never fail a request: a listener error is logged (once a minute) and dropped.
  let lastListenerError = Number.NEGATIVE_INFINITY;
  function guarded<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void {
    return (...args: A) => {
      try {
        fn(...args);
      } catch (error) {
        const now = clock.now();
        if (now - lastListenerError >= 60_000) {
          lastListenerError = now;
          log.error(
            { event: 'telemetry-error', err: error instanceof Error ? error.message : String(error) },
            'telemetry listener failed; event dropped',
          );
        }
      }
    };
  }

  return {
    onAdmission: guarded(onAdmission),
    onDispatch: guarded(onDispatch),
    onQueueDeadLetter: guarded(onQueueDeadLetter),
    recordSpill: guarded(recordSpill),
    recordPaceChange: guarded(recordPaceChange),
    gauges,
    live,
    alerts,
    tenantLabel,
  };
}
