/**
 * The simulator's Prometheus metrics under the names vLLM's server uses, so what
 * reads a real engine's saturation (running and waiting sequences, KV-cache use,
 * tokens) reads the simulator the same way. prom-client, one registry per
 * simulator; gauges are read when scraped.
 */
import { Counter, Gauge, Registry } from 'prom-client';
import { VLLM_METRICS } from '../../lib/upstream/engine-metrics.js';

export interface VllmMetricsSource {
  readonly running: () => number;
  readonly waiting: () => number;
  /** KV-cache blocks in use, 0..1. */
  readonly kvCacheUsage: () => number;
}

export interface VllmMetrics {
  readonly registry: Registry;
  /** A finished request: its tokens go to the counters. */
  served(model: string, promptTokens: number, generationTokens: number): void;
}

export function createVllmMetrics(source: VllmMetricsSource, modelName: string): VllmMetrics {
  const registry = new Registry();
  const labelNames = ['model_name'] as const;
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.set({ model_name: modelName }, read());
      },
    });
  gauge(VLLM_METRICS.running, 'Number of requests currently running on GPU.', source.running);
  gauge(VLLM_METRICS.waiting, 'Number of requests waiting to be processed.', source.waiting);
  gauge(VLLM_METRICS.kvCacheUsage, 'GPU KV-cache usage. 1 means 100 percent usage.', source.kvCacheUsage);
  const counter = (name: string, help: string) => new Counter({ name, help, labelNames, registers: [registry] });
  const prompt = counter(VLLM_METRICS.promptTokens, 'Number of prefill tokens processed.');
  const generation = counter(VLLM_METRICS.generationTokens, 'Number of generation tokens processed.');
  const success = counter(VLLM_METRICS.success, 'Count of successfully processed requests.');
  return {
    registry,
    served(model, promptTokens, generationTokens) {
      prompt.inc({ model_name: model }, promptTokens);
      generation.inc({ model_name: model }, generationTokens);
      success.inc({ model_name: model });
    },
  };
}
