import { describe, expect, it } from 'vitest';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { VLLM_METRICS } from '../../../lib/upstream/engine-metrics.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';

const value = (text: string, name: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
};

describe('gpu-sim: vLLM-style Prometheus metrics', () => {
  it('reports running and waiting sequences, KV-cache use and tokens as vLLM names them', async () => {
    const clock = new VirtualClock(0);
    const gpu = createGpuSim({
      clock,
      slots: 2,
      queueLimit: 4,
      baseTokenMs: 10,
      minOutputTokens: 50,
      maxOutputTokens: 50,
      kvCacheTokens: 1_000,
    });
    const body = JSON.stringify({
      model: 'sim-llm',
      messages: [{ role: 'user', content: 'hello there' }],
      max_tokens: 50,
    });
    const calls = Array.from({ length: 3 }, () =>
      gpu.app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }),
    );
    await clock.advance(10);
    const during = await (await gpu.app.request('/metrics')).text();
    expect(value(during, VLLM_METRICS.running)).toBe(2);
    expect(value(during, VLLM_METRICS.waiting)).toBe(1);
    const kv = value(during, VLLM_METRICS.kvCacheUsage)!;
    expect(kv).toBeGreaterThan(0.1);
    expect(kv).toBeLessThan(1);
    await clock.advance(10_000);
    await Promise.all(calls);
    const after = await (await gpu.app.request('/metrics')).text();
    expect(value(after, VLLM_METRICS.running)).toBe(0);
    expect(value(after, VLLM_METRICS.kvCacheUsage)).toBe(0);
    expect(value(after, VLLM_METRICS.success)).toBe(3);
    expect(value(after, VLLM_METRICS.generationTokens)).toBe(150);
    gpu.close();
  });
});
