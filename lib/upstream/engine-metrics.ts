/**
 * What a model server says of its own load, read from its Prometheus page the way
 * vLLM serves it: requests running, requests waiting inside the engine, KV-cache
 * use. The simulated GPU (functions/gpu-sim/metrics.ts) emits these names from here,
 * so the reader and the emitter cannot drift apart.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** vLLM's metric names (vllm/v1/metrics/loggers.py). */
export const VLLM_METRICS = {
  running: 'vllm:num_requests_running',
  waiting: 'vllm:num_requests_waiting',
  kvCacheUsage: 'vllm:kv_cache_usage_perc',
  /** The name before vLLM 0.10 (deprecated by vllm-project/vllm#18354); still read. */
  kvCacheUsageLegacy: 'vllm:gpu_cache_usage_perc',
  promptTokens: 'vllm:prompt_tokens_total',
  generationTokens: 'vllm:generation_tokens_total',
  success: 'vllm:request_success_total',
} as const;

/** Where a server whose OpenAI API is at `baseUrl` (…/v1) serves its metrics: vLLM's `/metrics`, beside `/v1`. */
export function metricsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/metrics`;
}

/** Larger metrics pages are refused unread: vLLM's, histograms included, is tens of KiB. */
export const MAX_METRICS_BYTES = 4 * 1024 * 1024;

export interface EngineLoad {
  readonly running: number;
  readonly waiting: number;
  /** 0..1: the fullest KV cache of the server's engines. */
  readonly kvCacheUsage: number;
}

/**
 * The load on one server, summed over its engines (vLLM labels each data-parallel
 * engine, and may label by model): undefined when the page lacks running or
 * waiting, or is not a Prometheus page at all.
 */
export function readEngineLoad(text: string): EngineLoad | undefined {
  let families: ReturnType<typeof parsePrometheusTextFormat>;
  try {
    families = parsePrometheusTextFormat(text);
  } catch {
    return undefined;
  }
  const values = new Map<string, number[]>();
  for (const family of families) {
    const samples: number[] = [];
    for (const m of family.metrics) {
      const v = 'value' in m ? Number(m.value) : NaN;
      if (Number.isFinite(v) && v >= 0) samples.push(v);
    }
    values.set(family.name, samples);
  }
  const sum = (name: string) => values.get(name)?.reduce((a, b) => a + b, 0);
  const running = sum(VLLM_METRICS.running);
  const waiting = sum(VLLM_METRICS.waiting);
  if (running === undefined || waiting === undefined) return undefined;
  const kv = values.get(VLLM_METRICS.kvCacheUsage) ?? values.get(VLLM_METRICS.kvCacheUsageLegacy) ?? [];
  return { running, waiting, kvCacheUsage: Math.min(1, Math.max(0, ...kv, 0)) };
}

/** Several servers of one model as one: requests add up, the fullest cache counts. */
export function combineLoads(loads: readonly EngineLoad[]): EngineLoad {
  return loads.reduce(
    (a, b) => ({
      running: a.running + b.running,
      waiting: a.waiting + b.waiting,
      kvCacheUsage: Math.max(a.kvCacheUsage, b.kvCacheUsage),
    }),
    { running: 0, waiting: 0, kvCacheUsage: 0 },
  );
}
