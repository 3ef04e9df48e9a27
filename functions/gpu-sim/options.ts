import { z } from 'zod';
import type { Clock } from '../../lib/clock/clock.js';

const clockSchema = z.custom<Clock>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Clock).now === 'function' &&
    typeof (v as Clock).setTimer === 'function',
  { message: 'clock must implement now() and setTimer()' },
);

/** Overload and server failures, and the client errors a real engine answers for a request it cannot take. */
const faultStatus = z.union([
  z.literal(400),
  z.literal(404),
  z.literal(422),
  z.literal(429),
  z.literal(500),
  z.literal(502),
  z.literal(503),
]);

/**
 * Defaults describe a modest single-GPU server: 8 concurrent sequences, ~50 tokens/s
 * per sequence when idle, roughly half that when every slot is busy.
 */
export const gpuSimOptionsSchema = z.object({
  clock: clockSchema,
  models: z.array(z.string().min(1)).min(1).default(['sim-llm']),
  slots: z.int().min(1).default(8),
  /** Requests waiting for a slot; null: unbounded, as vLLM's waiting queue. */
  queueLimit: z.int().min(0).nullable().default(16),
  /** How long a request may wait for a slot before a 503; null: as long as its client stays. */
  maxQueueWaitMs: z.number().positive().nullable().default(5000),
  /**
   * Who gets a freed slot: `fcfs` (arrival order) or `priority` (vLLM's
   * `--scheduling-policy priority`: the request body's `priority`, lower first, then
   * arrival). Under `fcfs` a non-zero priority is refused with 400, as vLLM does.
   */
  queuePolicy: z.enum(['fcfs', 'priority']).default('fcfs'),
  prefillMsPerKToken: z.number().min(0).default(40),
  baseTokenMs: z.number().min(0).default(20),
  contentionFactor: z.number().min(0).default(1),
  defaultMaxTokens: z.int().min(1).default(256),
  minOutputTokens: z.int().min(1).default(16),
  maxOutputTokens: z.int().min(1).default(128),
  /**
   * Tokens per timer and per stream chunk. 1 is the most faithful; a scenario with
   * thousands of requests on a virtual clock can raise it to fire fewer timers.
   */
  decodeStepTokens: z.int().min(1).default(1),
  embeddingDims: z.int().min(1).default(8),
  embeddingBaseMs: z.number().min(0).default(5),
  /** Upper bound for the Retry-After estimate, in seconds. */
  maxRetryAfterS: z.int().min(1).default(30),
  /**
   * Steady fault rate for inference routes, spread evenly (every 1/rate-th request)
   * rather than randomly, so a test or benchmark sees exactly the same failures each run.
   */
  failureRate: z.number().min(0).max(1).default(0),
  failureStatus: faultStatus.default(500),
  /**
   * KV-cache size in tokens, for `vllm:kv_cache_usage_perc`: a running request holds
   * its prompt and the tokens it will generate. Default: every slot at maxOutputTokens x 2.
   */
  kvCacheTokens: z.int().min(1).optional(),
  /** A label for logs and the models list. */
  name: z.string().default('gpu-sim'),
});

export type GpuSimOptions = z.input<typeof gpuSimOptionsSchema>;
export type GpuSimConfig = z.output<typeof gpuSimOptionsSchema>;
export type FaultStatus = z.infer<typeof faultStatus>;

export function parseGpuSimOptions(options: GpuSimOptions): GpuSimConfig {
  const config = gpuSimOptionsSchema.parse(options);
  if (config.minOutputTokens > config.maxOutputTokens) {
    throw new Error('gpu-sim: minOutputTokens must not exceed maxOutputTokens');
  }
  return config;
}
