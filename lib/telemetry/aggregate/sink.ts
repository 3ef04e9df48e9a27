/**
 * Publishes this process's flow into the shared aggregate: increments are summed
 * in memory and flushed every `flushMs` in one store call, with this instance's
 * record (role, policy refresh, gauges, alerts) and the trace steps of the
 * requests it touched (into the current trace bucket). What the store cannot take is dropped, never retried:
 * telemetry must not hold a request or grow without bound.
 */
import type { Clock } from '../../clock/clock.js';
import type { AggregateOps, CounterAdd } from '../../store/aggregate.js';
import type { FlowAdmission, FlowDispatch, TraceStep } from './events.js';
import { DEPTH_KEY, fields, flowKey, historyKey, INSTANCES_KEY, traceKey, type FlowStat } from './keys.js';
import { AGGREGATE, type InstanceRecord } from './layout.js';
import { traceBucket } from './trace.js';

export interface AggregateSinkOptions {
  readonly store: AggregateOps;
  readonly clock: Clock;
  /** Names this process in the instance registry and in trace steps. */
  readonly instance: string;
  readonly role: string;
  /** What this instance says of itself at each flush. */
  readonly describe?: () => Omit<InstanceRecord, 'instance' | 'role' | 'at'>;
  readonly flushMs?: number;
  readonly onError?: (error: unknown) => void;
}

export interface AggregateSink {
  onAdmission(event: FlowAdmission): void;
  onDispatch(event: FlowDispatch): void;
  /** Sends what has been gathered; resolves once the store has it (or refused it). */
  flush(): Promise<void>;
  /** Flushes every `flushMs` until close(). */
  start(): void;
  close(): Promise<void>;
}

export function createAggregateSink(options: AggregateSinkOptions): AggregateSink {
  const { store, clock, instance } = options;
  const flushMs = options.flushMs ?? AGGREGATE.flushMs;
  let counts = new Map<string, { ttlMs: number; maxFields: number; deltas: Map<string, number> }>();
  let traces = new Map<string, TraceStep[]>();
  let pendingFields = 0;
  let cancel: (() => void) | undefined;
  let closed = false;

  function add(key: string, ttlMs: number, maxFields: number, field: string, delta: number): void {
    let c = counts.get(key);
    if (!c) counts.set(key, (c = { ttlMs, maxFields, deltas: new Map() }));
    if (!c.deltas.has(field)) {
      // A flood between two flushes is folded by the store's cap anyway; keep this process bounded too.
      if (pendingFields >= AGGREGATE.maxPendingFields) return;
      pendingFields++;
    }
    c.deltas.set(field, (c.deltas.get(field) ?? 0) + delta);
  }

  function flow(stat: FlowStat, e: { tenant: string; account?: string; tier: string; model: string }): void {
    const now = clock.now();
    const key = flowKey(Math.floor(now / AGGREGATE.bucketMs) * AGGREGATE.bucketMs);
    const one = (field: string) => add(key, AGGREGATE.flowTtlMs, AGGREGATE.flowMaxFields, field, 1);
    one(fields.tenant(e.tenant, stat));
    if (e.account !== undefined) one(fields.account(e.account, e.tenant, e.tier, stat));
    one(fields.model(e.tier, e.model, stat));
  }

  function history(tier: string, series: string): void {
    const now = clock.now();
    const minute = Math.floor(now / 60_000) * 60_000;
    const second = Math.floor((now - minute) / AGGREGATE.bucketMs);
    add(
      historyKey(minute),
      AGGREGATE.historyTtlMs,
      AGGREGATE.historyMaxFields,
      fields.history(tier, series, second),
      1,
    );
  }

  function depth(e: { liteTopic: string; tier: string; tenant: string; model: string }, delta: number): void {
    add(
      DEPTH_KEY,
      AGGREGATE.depthTtlMs,
      AGGREGATE.depthMaxFields,
      fields.depth(e.liteTopic, e.tier, e.tenant, e.model),
      delta,
    );
  }

  function trace(id: string, step: string, detail: Record<string, unknown>): void {
    let steps = traces.get(id);
    if (!steps) {
      if (traces.size >= AGGREGATE.maxPendingTraces) return;
      traces.set(id, (steps = []));
    }
    if (steps.length < AGGREGATE.traceMaxSteps) steps.push({ at: clock.now(), by: instance, step, ...detail });
  }

  function onAdmission(e: FlowAdmission): void {
    const windows = e.windows?.map((w) => ({ scope: w.scope, unit: w.unit, limit: w.limit, remaining: w.remaining }));
    if (e.outcome === 'admitted') {
      flow('admitted', e);
      history(e.tier, 'admitted');
      if (e.warning) flow('warned', e);
      if (e.liteTopic !== undefined) depth({ ...e, liteTopic: e.liteTopic }, 1);
      const { tenant, account, tier, model, liteTopic, warning } = e;
      trace(e.id, 'admitted', { tenant, account, tier, model, liteTopic, windows, warning });
    } else {
      flow('refused', e);
      history(e.tier, 'refused');
      trace(e.id, 'refused', {
        tenant: e.tenant,
        account: e.account,
        tier: e.tier,
        model: e.model,
        windows,
        reason: e.reason,
      });
    }
  }

  function onDispatch(e: FlowDispatch): void {
    const env = e.envelope;
    switch (e.type) {
      case 'suspended':
        history(env.tier, 'suspended');
        trace(env.id, 'suspended', { liteTopic: env.liteTopic, cause: e.cause, ms: e.ms });
        break;
      case 'started':
        trace(env.id, 'started', {
          liteTopic: env.liteTopic,
          queueWaitMs: e.queueWaitMs,
          slotWaitMs: e.slotWaitMs ?? 0,
        });
        break;
      case 'completed':
        history(env.tier, 'completed');
        depth(env, -1);
        trace(env.id, 'completed', { status: e.status, totalMs: e.totalMs });
        break;
      case 'retrying':
        trace(env.id, 'retrying', { attempt: e.attempt, reason: e.reason });
        break;
      case 'failed':
        history(env.tier, 'failed');
        depth(env, -1);
        trace(env.id, 'failed', { status: e.status, reason: e.reason });
        break;
      case 'expired':
        history(env.tier, 'expired');
        depth(env, -1);
        trace(env.id, 'expired', {});
        break;
    }
  }

  async function flush(): Promise<void> {
    const taken = counts;
    const takenTraces = traces;
    counts = new Map();
    traces = new Map();
    pendingFields = 0;
    const adds: CounterAdd[] = [...taken].map(([key, c]) => ({
      key,
      ttlMs: c.ttlMs,
      maxFields: c.maxFields,
      counts: [...c.deltas],
    }));
    const record: InstanceRecord = { instance, role: options.role, at: clock.now(), ...options.describe?.() };
    const calls: Promise<void>[] = [
      store.putMember(INSTANCES_KEY, instance, JSON.stringify(record), AGGREGATE.instanceTtlMs, AGGREGATE.maxInstances),
    ];
    if (adds.length > 0) calls.push(store.addCounts(adds));
    if (takenTraces.size > 0) {
      const lines = [...takenTraces].flatMap(([id, steps]) =>
        steps.map((s) => [fields.trace(id), JSON.stringify(s)] as const),
      );
      const { traceTtlMs: ttlMs, traceMaxIds: maxFields, traceMaxBytes: maxBytes } = AGGREGATE;
      calls.push(store.appendLines([{ key: traceKey(traceBucket(clock.now())), ttlMs, maxFields, maxBytes, lines }]));
    }
    const results = await Promise.allSettled(calls);
    for (const r of results) if (r.status === 'rejected') options.onError?.(r.reason);
  }

  function tick(): void {
    if (closed) return;
    cancel = clock.setTimer(flushMs, () => void flush().finally(tick));
  }

  return {
    onAdmission,
    onDispatch,
    flush,
    start: tick,
    async close() {
      closed = true;
      cancel?.();
      await flush();
    },
  };
}
