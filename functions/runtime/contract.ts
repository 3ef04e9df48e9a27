/**
 * The names the CDK stacks and the deployed processes share, kept once: environment
 * variables (the keys of the runtime's config schema), the JSON fields of the secrets the
 * stacks reference, and the spillover queue's attributes. infra/ builds environments and
 * queues through this module; test/infra/contract.test.ts checks the synthesized templates
 * against it, so a stack cannot set a name the runtime does not read.
 */
import { CONTRACT_METRICS } from '../../lib/telemetry/emf.js';
import { CONFIG_NAMES, type ConfigName } from './config.js';

export { CONFIG_NAMES, type ConfigName };

/**
 * The CloudWatch metrics the stacks alarm and scale on (EMF, dimension Stage; the admission
 * ones also Tier): the edge writes AdmissionWarning, AdmissionRejected and SpilloverSent,
 * the dispatchers DispatcherBacklog and Inflight.
 */
export const SLUICE_NAMESPACE = 'Sluice';
export const METRICS = CONTRACT_METRICS;

/** The process that emits each of them: what an alarm on it watches. */
export const METRIC_EMITTER: Record<(typeof METRICS)[keyof typeof METRICS], 'edge' | 'dispatcher'> = {
  [METRICS.admissionWarning]: 'edge',
  [METRICS.admissionRejected]: 'edge',
  [METRICS.spilloverSent]: 'edge',
  [METRICS.dispatcherBacklog]: 'dispatcher',
  [METRICS.inflight]: 'dispatcher',
};

/** Read by Node.js itself, not by Sluice. */
export const PLATFORM_ENV = ['NODE_OPTIONS'] as const;

export type RuntimeEnv = { readonly [K in ConfigName]?: string } & { readonly NODE_OPTIONS?: string };

/** A process's environment; a name the runtime does not read is a type error. Unset values are left out. */
export function runtimeEnv(env: RuntimeEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

/** Whether the runtime reads `name` (for checks over synthesized templates). */
export function isRuntimeEnvName(name: string): boolean {
  return (CONFIG_NAMES as readonly string[]).includes(name) || (PLATFORM_ENV as readonly string[]).includes(name);
}

/** Where the dispatchers' runtime writes the proxies' CA for @grpc/grpc-js (GRPC_DEFAULT_SSL_ROOTS_FILE_PATH). */
export const ROCKETMQ_CA_FILE = '/tmp/sluice-rocketmq-ca.pem';

/** Header CloudFront adds to every origin request; the edge refuses requests without it. */
export const ORIGIN_VERIFY_HEADER = 'x-sluice-origin-verify';

/** JSON fields of the secrets the stacks create or reference, and the runtime reads. */
export const SECRET_FIELDS = {
  upstash: { url: 'url', token: 'token' },
  rocketmq: { username: 'username', password: 'password' },
  upstream: { apiKey: 'apiKey' },
  origin: { value: 'value' },
  admin: { key: 'key' },
  /** The RocketMQ proxies' server certificate and key (PEM), issued at deploy (infra/constructs/proxy-tls-certificate.ts). */
  proxyTls: { cert: 'cert', key: 'key' },
  /** The CA certificate (PEM) the RocketMQ clients inside the VPC trust for the proxies. */
  proxyCa: { cert: 'ca' },
} as const;

/**
 * The spillover: FIFO (the edge sends MessageGroupId = LiteTopic and a deduplication id),
 * high throughput (deduplication and throughput limits per message group).
 */
export const SPILLOVER_QUEUE_ATTRIBUTES = {
  FifoQueue: 'true',
  ContentBasedDeduplication: 'false',
  DeduplicationScope: 'messageGroup',
  FifoThroughputLimit: 'perMessageGroupId',
} as const;
