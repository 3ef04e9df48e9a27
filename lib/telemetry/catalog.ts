/**
 * Every metric Sluice emits, once: name, kind, labels and meaning. The Prometheus
 * and CloudWatch EMF adapters both read this table, so the two backends always
 * carry the same metrics under the same names (Prometheus adds `_total` to
 * counters and reports latencies in seconds, as its conventions ask).
 *
 * `tenant` labels are bounded (top-N named, the rest "other", see cardinality.ts);
 * tier, model, reason, cause and alert come from the policy or fixed sets.
 */

export type Labels = Readonly<Record<string, string>>;

export const COUNTERS = {
  admitted: { help: 'Requests admitted at the edge.', labels: ['tier', 'tenant', 'model'] },
  refused: {
    help: 'Requests refused at the edge, by reason (x-sluice-reason).',
    labels: ['tier', 'tenant', 'model', 'reason'],
  },
  warned: {
    help: 'Requests admitted with a near-limit warning (x-sluice-warning).',
    labels: ['tier', 'tenant', 'model'],
  },
  degraded: {
    help: 'Degrade-tier requests admitted past their soft quota, to be paced slower.',
    labels: ['tier', 'tenant', 'model'],
  },
  spilled: {
    help: 'Envelopes sent to the spillover queue because the broker refused them.',
    labels: ['tier', 'tenant', 'model'],
  },
  suspended: {
    help: 'Deliveries suspended by the dispatcher, by cause (pace or capacity).',
    labels: ['tier', 'tenant', 'model', 'cause'],
  },
  dispatched: { help: 'Deliveries that got a GPU slot and were sent upstream.', labels: ['tier', 'tenant', 'model'] },
  completed: { help: 'Requests answered by the model endpoint.', labels: ['tier', 'tenant', 'model'] },
  absorbed: {
    help: 'Requests held in the queue (waited at least the Suspend granularity) and then completed: the burst absorbed instead of refused.',
    labels: ['tier', 'tenant', 'model'],
  },
  retried: { help: 'Deliveries that failed retriably and will be redelivered.', labels: ['tier', 'tenant', 'model'] },
  expired: {
    help: 'Requests that waited longer than their tier allows and were answered 504.',
    labels: ['tier', 'tenant', 'model'],
  },
  dead_lettered: {
    help: 'Envelopes put in the dead-letter queue (failed for good or expired), by kind.',
    labels: ['tier', 'tenant', 'model', 'kind'],
  },
  pace_changes: {
    help: "Changes of a model's release pace by congestion control, by direction.",
    labels: ['model', 'direction'],
  },
  alerts: { help: 'Alerts raised (also logged as structured events), by alert.', labels: ['alert', 'tier'] },
} as const satisfies Record<string, { help: string; labels: readonly string[] }>;

export const HISTOGRAMS = {
  queue_wait: { help: 'Time from enqueue to dispatch (slot granted).', labels: ['tier', 'tenant', 'model'] },
  end_to_end: { help: 'Time from enqueue to completion.', labels: ['tier', 'tenant', 'model'] },
  wait: {
    help: 'Where the wait goes, one interval per observation, by stage: broker (enqueue to first delivery), suspend_pace, suspend_capacity, suspend_paused, suspend_other, retry (away after a Suspend or failure), slot (held for a GPU slot), upstream (the GPU call), first_token (streams, part of upstream).',
    labels: ['stage', 'tier', 'model'],
  },
} as const satisfies Record<string, { help: string; labels: readonly string[] }>;

export const GAUGES = {
  reservoir_depth: {
    help: 'Requests waiting in the LiteTopics of this tier, tenant and model.',
    labels: ['tier', 'tenant', 'model'],
  },
  gpu_slots_in_use: { help: 'GPU slots held by the tier on the model.', labels: ['model', 'tier'] },
  gpu_slots_reserved: {
    help: 'GPU slots reserved for the tier on the model (its share of the capacity).',
    labels: ['model', 'tier'],
  },
  gpu_slots_capacity: {
    help: "GPU slots of the model: the policy's, or as its servers' metrics set them (saturation).",
    labels: ['model'],
  },
  pace_factor: { help: "Congestion factor applied to the model's release pace (1 = full pace).", labels: ['model'] },
} as const satisfies Record<string, { help: string; labels: readonly string[] }>;

export type CounterName = keyof typeof COUNTERS;
export type HistogramName = keyof typeof HISTOGRAMS;
export type GaugeName = keyof typeof GAUGES;

/** Latency buckets, in seconds: 5 ms .. 10 min (queue waits of offline work run long). */
export const LATENCY_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

export interface GaugeSample {
  readonly name: GaugeName;
  readonly labels: Labels;
  readonly value: number;
}

/** Where metric observations go. Gauges are pulled when the backend reads them. */
export interface MetricSink {
  count(name: CounterName, labels: Labels, value: number): void;
  /** A latency, in milliseconds. */
  observe(name: HistogramName, labels: Labels, ms: number): void;
  /** Lets the sink read the current gauges when it exports. */
  bindGauges?(read: () => readonly GaugeSample[]): void;
}
