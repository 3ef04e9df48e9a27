/**
 * CloudWatch Embedded Metric Format adapter for Lambda, over
 * @aws-lambda-powertools/metrics. It is fed by the same telemetry core as the
 * Prometheus adapter; observations are aggregated in memory (counters summed,
 * latencies kept as value lists) and `flush()` writes one EMF JSON line to stdout
 * per dimension set, which CloudWatch turns into metrics. Call `flush()` at the end
 * of each invocation (or on a timer in a long-lived process).
 *
 * Counters are also written rolled up, under fewer dimensions, so CloudWatch alarms
 * can watch one metric per tier or per alert: `alerts` by {service, alert}, every
 * other counter with a tier by {service, tier} (see ALARMS in alarms.ts).
 *
 * The powertools `Metrics` instance is built by the entry point (it reads its
 * POWERTOOLS_* settings from the environment, which nothing under lib/ does).
 */
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import type { Clock } from '../clock/clock.js';
import type { CounterName, GaugeSample, HistogramName, Labels, MetricSink } from './catalog.js';

export interface EmfSink extends MetricSink {
  /** Writes what was observed since the last flush (and the current gauges); returns the EMF lines written. */
  flush(): number;
}

export interface EmfSinkOptions {
  readonly clock: Clock;
  readonly metrics: Metrics;
  /** Include gauges (reservoir depth, GPU slots, pace) in each flush. Default true. */
  readonly gauges?: boolean;
  /** Also write counters rolled up by tier (and alerts by alert). Default true. */
  readonly rollups?: boolean;
  /**
   * Also write the metrics the CDK stacks alarm and scale on (infra/metrics.ts:
   * AdmissionWarning and AdmissionRejected by {Stage, Tier}; SpilloverSent,
   * DispatcherBacklog and Inflight by {Stage}). They need exactly those dimensions,
   * so they go through a powertools instance of their own, without `service`.
   */
  readonly contract?: { readonly stage: string; readonly metrics: Metrics };
}

/** Names shared with infra/metrics.ts (METRICS), the contract with the CDK alarms and scaling. */
export const CONTRACT_METRICS = {
  admissionWarning: 'AdmissionWarning',
  admissionRejected: 'AdmissionRejected',
  spilloverSent: 'SpilloverSent',
  dispatcherBacklog: 'DispatcherBacklog',
  inflight: 'Inflight',
} as const;

/**
 * CloudWatch keeps at most 100 values per metric in one EMF document, and powertools
 * publishes by itself (dropping our dimensions) when a metric reaches 100: stay below.
 */
const MAX_VALUES = 99;

interface Group {
  readonly dims: Labels;
  readonly counts: Map<string, number>;
  readonly latencies: Map<string, number[]>;
  readonly gauges: Map<string, number>;
}

export function createEmfSink(options: EmfSinkOptions): EmfSink {
  const { clock, metrics } = options;
  const groups = new Map<string, Group>();
  const contract = options.contract;
  contract?.metrics.clearDefaultDimensions();
  const perTier = new Map<string, { warned: number; refused: number }>();
  let spilled = 0;
  let readGauges: () => readonly GaugeSample[] = () => [];

  function group(labels: Labels): Group {
    // Empty values are not valid EMF dimensions.
    const dims = Object.fromEntries(Object.entries(labels).map(([k, v]) => [k, v === '' ? 'none' : v]));
    const key = Object.entries(dims)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join('\u0000');
    let g = groups.get(key);
    if (!g) {
      g = { dims, counts: new Map(), latencies: new Map(), gauges: new Map() };
      groups.set(key, g);
    }
    return g;
  }

  return {
    count(name: CounterName, labels: Labels, value: number) {
      const g = group(labels);
      g.counts.set(name, (g.counts.get(name) ?? 0) + value);
      // Tiers with any admission traffic report both, zeros included, so graphs show quiet as 0.
      if (contract && (name === 'admitted' || name === 'warned' || name === 'refused') && labels.tier) {
        const t = perTier.get(labels.tier) ?? { warned: 0, refused: 0 };
        if (name !== 'admitted') t[name] += value;
        perTier.set(labels.tier, t);
      }
      if (name === 'spilled') spilled += value;
      const rollup = (options.rollups ?? true) ? rollupOf(name, labels) : undefined;
      if (rollup) {
        const r = group(rollup);
        r.counts.set(name, (r.counts.get(name) ?? 0) + value);
      }
    },
    observe(name: HistogramName, labels: Labels, ms: number) {
      const g = group(labels);
      const list = g.latencies.get(name) ?? [];
      list.push(ms);
      g.latencies.set(name, list);
    },
    bindGauges(read) {
      readGauges = read;
    },
    flush() {
      const gauges = (options.gauges ?? true) ? readGauges() : [];
      for (const s of gauges) group(s.labels).gauges.set(s.name, s.value);
      let lines = 0;
      const now = clock.now();
      if (contract) {
        const m = contract.metrics;
        for (const [tier, t] of perTier) {
          m.addDimension('Stage', contract.stage);
          m.addDimension('Tier', tier);
          m.addMetric(CONTRACT_METRICS.admissionWarning, MetricUnit.Count, t.warned);
          m.addMetric(CONTRACT_METRICS.admissionRejected, MetricUnit.Count, t.refused);
          m.setTimestamp(now);
          m.publishStoredMetrics();
          lines++;
        }
        m.addDimension('Stage', contract.stage);
        m.addMetric(CONTRACT_METRICS.spilloverSent, MetricUnit.Count, spilled);
        if (gauges.length > 0) {
          const sum = (name: string) => gauges.filter((g) => g.name === name).reduce((a, g) => a + g.value, 0);
          m.addMetric(CONTRACT_METRICS.dispatcherBacklog, MetricUnit.Count, sum('reservoir_depth'));
          m.addMetric(CONTRACT_METRICS.inflight, MetricUnit.Count, sum('gpu_slots_in_use'));
        }
        m.setTimestamp(now);
        m.publishStoredMetrics();
        lines++;
        perTier.clear();
        spilled = 0;
      }
      for (const g of groups.values()) {
        // Latency lists longer than 100 values span several documents; the first carries the counters.
        const chunks = Math.max(1, ...[...g.latencies.values()].map((l) => Math.ceil(l.length / MAX_VALUES)));
        for (let i = 0; i < chunks; i++) {
          let stored = 0;
          for (const [k, v] of Object.entries(g.dims)) metrics.addDimension(k, v);
          for (const [name, list] of g.latencies) {
            for (const v of list.slice(i * MAX_VALUES, (i + 1) * MAX_VALUES)) {
              metrics.addMetric(`${name}_ms`, MetricUnit.Milliseconds, v);
              stored++;
            }
          }
          if (i === 0) {
            for (const [name, v] of g.counts) {
              metrics.addMetric(name, MetricUnit.Count, v);
              stored++;
            }
            for (const [name, v] of g.gauges) {
              metrics.addMetric(name, MetricUnit.Count, v);
              stored++;
            }
          }
          if (stored === 0) {
            metrics.clearDimensions();
            continue;
          }
          metrics.setTimestamp(now);
          metrics.publishStoredMetrics();
          lines++;
        }
      }
      groups.clear();
      return lines;
    },
  };
}

/** The dimensions an alarm watches a counter by: alerts by alert, the rest by tier. */
export function rollupOf(name: CounterName, labels: Labels): Labels | undefined {
  if (name === 'alerts') return labels.alert ? { alert: labels.alert } : undefined;
  return labels.tier && Object.keys(labels).length > 1 ? { tier: labels.tier } : undefined;
}
