/**
 * Prometheus adapter (prom-client): counters `sluice_<name>_total`, latency
 * histograms `sluice_<name>_seconds`, and gauges read from the telemetry core at
 * scrape time. Each adapter has its own registry unless one is passed, so several
 * Sluices in one process (tests) do not collide.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import {
  COUNTERS,
  GAUGES,
  HISTOGRAMS,
  LATENCY_BUCKETS_S,
  type CounterName,
  type GaugeName,
  type GaugeSample,
  type HistogramName,
  type Labels,
  type MetricSink,
} from './catalog.js';

export interface PrometheusSink extends MetricSink {
  readonly registry: Registry;
  /** The exposition text for `GET /metrics`. */
  scrape(): Promise<string>;
  readonly contentType: string;
}

export function createPrometheusSink(options: { registry?: Registry; prefix?: string } = {}): PrometheusSink {
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'sluice_';
  const counters = {} as Record<CounterName, Counter<string>>;
  for (const [name, spec] of Object.entries(COUNTERS) as [CounterName, (typeof COUNTERS)[CounterName]][]) {
    counters[name] = new Counter({
      name: `${prefix}${name}_total`,
      help: spec.help,
      labelNames: [...spec.labels],
      registers: [registry],
    });
  }
  const histograms = {} as Record<HistogramName, Histogram<string>>;
  for (const [name, spec] of Object.entries(HISTOGRAMS) as [HistogramName, (typeof HISTOGRAMS)[HistogramName]][]) {
    histograms[name] = new Histogram({
      name: `${prefix}${name}_seconds`,
      help: spec.help,
      labelNames: [...spec.labels],
      buckets: LATENCY_BUCKETS_S,
      registers: [registry],
    });
  }

  let readGauges: () => readonly GaugeSample[] = () => [];
  // One read per scrape serves every gauge: the core computes them all at once.
  let cached: { samples: readonly GaugeSample[]; at: number } | undefined;
  let scrapeSeq = 0;
  function samples(): readonly GaugeSample[] {
    if (!cached || cached.at !== scrapeSeq) cached = { samples: readGauges(), at: scrapeSeq };
    return cached.samples;
  }
  for (const [name, spec] of Object.entries(GAUGES) as [GaugeName, (typeof GAUGES)[GaugeName]][]) {
    new Gauge({
      name: `${prefix}${name}`,
      help: spec.help,
      labelNames: [...spec.labels],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of samples()) if (s.name === name) this.set({ ...s.labels }, s.value);
      },
    });
  }

  return {
    registry,
    contentType: registry.contentType,
    count(name: CounterName, labels: Labels, value: number) {
      counters[name].inc({ ...labels }, value);
    },
    observe(name: HistogramName, labels: Labels, ms: number) {
      histograms[name].observe({ ...labels }, ms / 1000);
    },
    bindGauges(read) {
      readGauges = read;
    },
    async scrape() {
      scrapeSeq++;
      return registry.metrics();
    },
  };
}
