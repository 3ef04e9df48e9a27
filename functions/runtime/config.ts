/**
 * Process configuration, read from the environment once, at the entry point.
 * lib/ never sees process.env: it gets the parsed values. Names match the
 * runtime contract the CDK stacks set (infra/README.md).
 */
import { z } from 'zod';
import { DEFAULT_RECEIVERS } from '../../lib/queue/rocketmq/receivers.js';

/** Longest upstream call unless SLUICE_UPSTREAM_TIMEOUT_MS says otherwise (the seeded policy counts on it too). */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 120_000;

const Config = z.object({
  SLUICE_STAGE: z.string().default('local'),
  SLUICE_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** Policy source, first one set wins: SSM path, file, inline JSON. */
  SLUICE_POLICY_SSM_PATH: z.string().startsWith('/').optional(),
  SLUICE_POLICY_FILE: z.string().optional(),
  SLUICE_POLICY_JSON: z.string().optional(),
  /** How often the SSM policy is re-read. */
  SLUICE_POLICY_REFRESH_MS: z.coerce.number().int().positive().default(30_000),
  /** Shared state, first one set wins: Upstash REST (URL+token, or a Secrets Manager secret holding them), Redis TCP, else in-process. */
  UPSTASH_REDIS_REST_URL: z.string().url().optional(),
  UPSTASH_REDIS_REST_TOKEN: z.string().optional(),
  SLUICE_UPSTASH_SECRET_ID: z.string().optional(),
  SLUICE_REDIS_URL: z.string().url().optional(),
  /** When the shared store is slow or down: fail open onto a conservative local limiter, or closed with 503. */
  SLUICE_STORE_FAILURE_MODE: z.enum(['fail-open', 'fail-closed']).default('fail-open'),
  SLUICE_STORE_TIMEOUT_MS: z.coerce.number().int().positive().default(250),
  /** A secret holding {"value"}: the header CloudFront adds; requests without it are refused (403). */
  SLUICE_ORIGIN_SECRET_ID: z.string().optional(),
  /** A secret holding {"key"}: the bearer key of the admin API (/admin/v1); unset, the edge serves no admin API. */
  SLUICE_ADMIN_SECRET_ID: z.string().optional(),
  /** Request bodies larger than this are refused with 413. */
  SLUICE_BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  /** Request bodies nested deeper than this are refused with 400, before any charge. */
  SLUICE_MAX_BODY_DEPTH: z.coerce.number().int().positive().default(64),
  /** Base URL clients reach the edge at, for `status_url` and `Location`; unset: relative paths. */
  SLUICE_PUBLIC_BASE_URL: z.string().url().optional(),
  /**
   * On SIGTERM, how long in-flight work may run before it is handed back to the queue and the process exits.
   * The stacks set it a few seconds below the task's stop timeout, which can make it negative: then 0.
   */
  SLUICE_DRAIN_MS: z.coerce
    .number()
    .int()
    .default(25_000)
    .transform((ms) => Math.max(0, ms)),
  /**
   * Edge: a sync or stream answer not started within this long starts and sends bytes a client ignores
   * (SSE comments, JSON whitespace) at this interval; the stacks set a fraction of CloudFront's origin read timeout.
   */
  SLUICE_KEEPALIVE_MS: z.coerce.number().int().positive().default(15_000),
  /** Edge: longest a sync or stream client is held before it gets the status URL; the stacks set it below the Lambda timeout. */
  SLUICE_MAX_SYNC_WAIT_MS: z.coerce.number().int().positive().optional(),
  /** Longest upstream call; a dispatcher that vanished mid-call is known lost this long after the call began. */
  SLUICE_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(DEFAULT_UPSTREAM_TIMEOUT_MS),
  SLUICE_DISPATCH_CONCURRENCY: z.coerce.number().int().positive().default(64),
  /** Messages of one LiteTopic dispatched side by side; releases still leave in order. */
  SLUICE_INFLIGHT_PER_LITETOPIC: z.coerce.number().int().positive().default(32),
  /** How often a dispatcher writes its CloudWatch EMF metrics (backlog, in flight) to stdout. */
  SLUICE_EMF_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /** Where a dispatcher serves Prometheus `GET /metrics`. */
  SLUICE_METRICS_PORT: z.coerce.number().int().nonnegative().default(9464),
  /** The queue, when set: a RocketMQ 5.5 proxy (gRPC host:port), else the in-process engine. */
  SLUICE_ROCKETMQ_ENDPOINTS: z
    .string()
    .regex(/^[^:]+:\d+$/, 'host:port')
    .optional(),
  SLUICE_ROCKETMQ_TOPIC: z.string().default('sluice-requests'),
  SLUICE_ROCKETMQ_GROUP: z.string().default('sluice-dispatchers'),
  /** TLS to the proxy: the internal NLB (the proxies refuse plaintext), or the public endpoint of brokerPublicTls. */
  SLUICE_ROCKETMQ_TLS: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /**
   * PEM of the only CA the RocketMQ client trusts (the proxies' deploy-time CA, an ECS secret); unset: the
   * platform's trust store (the public endpoint's ACM certificate).
   */
  SLUICE_ROCKETMQ_CA_CERT: z.string().includes('BEGIN CERTIFICATE').optional(),
  /**
   * Where SLUICE_ROCKETMQ_CA_CERT is written for @grpc/grpc-js, which reads this variable (its own, documented)
   * when it loads, at process start in a bundle, and the file when the first channel opens: so the name is set
   * by the task definition, the file by the runtime.
   */
  GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: z.string().startsWith('/').optional(),
  /** ACL 2.0 credentials: a Secrets Manager secret holding {"username","password"} (edge), or both values (ECS secrets). */
  SLUICE_ROCKETMQ_SECRET_ID: z.string().optional(),
  SLUICE_ROCKETMQ_ACCESS_KEY: z.string().optional(),
  SLUICE_ROCKETMQ_SECRET_KEY: z.string().optional(),
  /** Bearer key the GPU endpoints require (an ECS secret). */
  SLUICE_UPSTREAM_API_KEY: z.string().optional(),
  /**
   * Physical LiteTopics a busy LiteTopic spreads over (lib/queue/sharded.ts): a FIFO group
   * runs one message per LiteTopic at a time, so this is how many of a tenant's requests
   * per model can be at the GPU at once on RocketMQ. 1 turns sharding off.
   */
  SLUICE_ROCKETMQ_LITETOPIC_SHARDS: z.coerce.number().int().min(1).max(64).default(8),
  /**
   * LitePushConsumers per dispatcher, each with its own long poll (lib/queue/rocketmq/receivers.ts).
   */
  SLUICE_ROCKETMQ_RECEIVERS: z.coerce.number().int().min(1).max(16).default(DEFAULT_RECEIVERS),
  /** SQS FIFO queue taking envelopes the broker cannot (the edge spills, dispatchers redrive). */
  SLUICE_SPILLOVER_QUEUE_URL: z.string().url().optional(),
  /** SQS queue of envelopes that failed for good or expired, with reasons. */
  SLUICE_DLQ_URL: z.string().url().optional(),
  /** Another SQS endpoint (ElasticMQ locally). */
  SLUICE_SQS_ENDPOINT: z.string().url().optional(),
  AWS_REGION: z.string().optional(),
  /** The admin key for /admin/v1 and /dashboard on a local edge (in AWS: SLUICE_ADMIN_SECRET_ID). */
  SLUICE_ADMIN_KEY: z.string().min(16).optional(),
  /** Where the Node edge (functions/edge/main.ts) listens; 0 picks a free port. */
  SLUICE_EDGE_HOST: z.string().default('127.0.0.1'),
  SLUICE_EDGE_PORT: z.coerce.number().int().nonnegative().default(8787),
});
export type Config = z.infer<typeof Config>;

export function readConfig(env: Record<string, string | undefined>): Config {
  const parsed = Config.safeParse(env);
  if (!parsed.success) {
    throw new Error(
      `invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`,
    );
  }
  return parsed.data;
}

/** Every variable the runtime reads: the names the stacks may set (functions/runtime/contract.ts). */
export const CONFIG_NAMES: readonly (keyof z.input<typeof Config>)[] = Object.keys(Config.shape) as (keyof z.input<
  typeof Config
>)[];
export type ConfigName = keyof z.input<typeof Config>;
