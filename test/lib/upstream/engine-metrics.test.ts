import { describe, expect, it } from 'vitest';
import { combineLoads, metricsUrl, readEngineLoad, VLLM_METRICS } from '../../../lib/upstream/engine-metrics.js';

/** Shaped as vLLM 0.11's /metrics: two data-parallel engines, histograms and counters around the gauges. */
const VLLM_PAGE = `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 12.0
vllm:num_requests_running{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 9.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:num_requests_waiting{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 3.0
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.41
vllm:kv_cache_usage_perc{engine="1",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.67
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 182733.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",model_name="meta-llama/Llama-3.1-8B-Instruct"} 0.0
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1204.0
vllm:time_to_first_token_seconds_count{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 1204.0
vllm:time_to_first_token_seconds_sum{engine="0",model_name="meta-llama/Llama-3.1-8B-Instruct"} 96.3
`;

describe("reading a model server's load from its metrics page", () => {
  it('adds up running and waiting over the engines and keeps the fullest KV cache', () => {
    expect(readEngineLoad(VLLM_PAGE)).toEqual({ running: 21, waiting: 3, kvCacheUsage: 0.67 });
  });

  it('reads the KV-cache gauge under its name before vLLM 0.10 too', () => {
    const page = `${VLLM_METRICS.running} 2\n${VLLM_METRICS.waiting} 0\n${VLLM_METRICS.kvCacheUsageLegacy} 0.9\n`;
    expect(readEngineLoad(page)).toEqual({ running: 2, waiting: 0, kvCacheUsage: 0.9 });
  });

  it('takes a page without a KV-cache gauge as an empty cache', () => {
    expect(readEngineLoad(`${VLLM_METRICS.running} 4\n${VLLM_METRICS.waiting} 1\n`)).toEqual({
      running: 4,
      waiting: 1,
      kvCacheUsage: 0,
    });
  });

  it('says nothing of a page that lacks running or waiting, or is no metrics page at all', () => {
    expect(readEngineLoad(`${VLLM_METRICS.running} 4\n`)).toBeUndefined();
    expect(readEngineLoad('')).toBeUndefined();
    expect(readEngineLoad('<html><body>502 Bad Gateway</body></html>')).toBeUndefined();
    expect(readEngineLoad('{"error": "not found"}')).toBeUndefined();
  });

  it('ignores samples that are not counts (NaN, negative, +Inf)', () => {
    const page = `${VLLM_METRICS.running} NaN\n${VLLM_METRICS.running}{engine="1"} 3\n${VLLM_METRICS.waiting} -1\n${VLLM_METRICS.kvCacheUsage} +Inf\n`;
    expect(readEngineLoad(page)).toEqual({ running: 3, waiting: 0, kvCacheUsage: 0 });
  });

  it('finds the page beside the OpenAI base URL, as vLLM serves it', () => {
    expect(metricsUrl('http://gpu-1:8000/v1')).toBe('http://gpu-1:8000/metrics');
    expect(metricsUrl('http://gpu-1:8000/v1/')).toBe('http://gpu-1:8000/metrics');
    expect(metricsUrl('https://lb.internal/llama/v1')).toBe('https://lb.internal/llama/metrics');
    expect(metricsUrl('http://gpu-1:8000')).toBe('http://gpu-1:8000/metrics');
  });

  it('counts several servers of one model as one', () => {
    expect(
      combineLoads([
        { running: 3, waiting: 1, kvCacheUsage: 0.2 },
        { running: 5, waiting: 0, kvCacheUsage: 0.7 },
      ]),
    ).toEqual({ running: 8, waiting: 1, kvCacheUsage: 0.7 });
  });
});
