import { DRAIN_EXIT_MS, DRAIN_GRACE_MS } from '../lib/dispatch/drain.ts';
import { PROXY_LONG_POLL_MS } from './rocketmq/proxy-conf.ts';

/**
 * Everything a deployment of Sluice varies on, read from CDK context (`cdk.json`,
 * `-c key=value` on the command line) with defaults that synthesize offline.
 *
 * No value here triggers an AWS lookup: the VPC's availability zones are explicit,
 * an existing VPC is described by attributes (not `Vpc.fromLookup`), and the
 * account may stay unresolved (an environment-agnostic account) for `cdk synth`.
 */

/** An existing VPC, described without a lookup. */
export interface ExistingVpcConfig {
  readonly vpcId: string;
  readonly vpcCidrBlock: string;
  readonly availabilityZones: string[];
  /** Private subnets with a route to the internet (NAT), one per zone. */
  readonly privateSubnetIds: string[];
  readonly privateSubnetRouteTableIds?: string[];
  /** Public subnets, needed only for the broker's public TLS endpoint (`brokerPublicTls`). */
  readonly publicSubnetIds?: string[];
}

/** A public TLS entry to the RocketMQ proxies, for the edge function (which runs outside the VPC). */
export interface BrokerPublicTlsConfig {
  /** ACM certificate (same region) for the NLB's TLS listener. */
  readonly certificateArn: string;
  /** DNS name the certificate covers, pointed (CNAME) at the public NLB; the edge connects to it. */
  readonly domainName: string;
}

export interface SluiceConfig {
  /** Deployment stage: names every stack, parameter path (`/sluice/<stage>/…`) and secret. */
  readonly stage: string;
  /** Account; undefined leaves the stacks account-agnostic (fine for `cdk synth`). */
  readonly account?: string;
  readonly region: string;
  /**
   * Availability zones of the VPC. Unset: the first two of the region, looked up at synth when
   * the account is known (cached in cdk.context.json), else chosen at deploy time (Fn::GetAZs).
   */
  readonly availabilityZones?: string[];
  readonly vpcCidr: string;
  readonly natGateways: number;
  readonly existingVpc?: ExistingVpcConfig;

  /** Secrets Manager secret (created before deploy) with JSON keys `url` and `token` of the Upstash REST API. */
  readonly upstashSecretName: string;

  /** OpenAI-compatible GPU endpoints per model: `{ "llama-3-8b": ["https://gpu-1.internal/v1"] }`. */
  readonly gpuEndpoints: Record<string, string[]>;
  /** Optional Secrets Manager secret (JSON key `apiKey`) sent to the GPU endpoints as a bearer token. */
  readonly gpuApiKeySecretName?: string;

  /** Use this RocketMQ proxy (gRPC `host:port`) and create no Broker stack. */
  readonly existingBrokerEndpoint?: string;
  /** Public TLS endpoint of the broker for the edge (see infra/README.md, "How the edge reaches the broker"). */
  readonly brokerPublicTls?: BrokerPublicTlsConfig;
  /** Container image of Apache RocketMQ (namesrv, broker, proxy and mqadmin all come from it). */
  readonly rocketmqImage: string;
  readonly brokerCpu: number;
  readonly brokerMemoryMiB: number;
  readonly namesrvCpu: number;
  readonly namesrvMemoryMiB: number;
  readonly proxyCpu: number;
  readonly proxyMemoryMiB: number;
  readonly proxyCount: number;
  /** LiteTopics idle this long are reclaimed by the broker (minutes, broker minimum 15). */
  readonly liteTopicTtlMinutes: number;

  readonly dispatcherCpu: number;
  readonly dispatcherMemoryMiB: number;
  readonly dispatcherMinTasks: number;
  readonly dispatcherMaxTasks: number;
  /** Backlog (messages waiting in LiteTopics, as the dispatchers report it) one task is sized for. */
  readonly dispatcherBacklogPerTask: number;
  /** Seconds a dispatcher gets after SIGTERM to finish in-flight requests (Fargate maximum 120). */
  readonly dispatcherDrainSeconds: number;

  /** Node.js major version of the edge runtime (20 per the design; 22 and 24 also accepted). */
  readonly edgeNodeMajor: 20 | 22 | 24;
  /** Custom domain of the CloudFront distribution (with `edgeCertificateArn`, an ACM certificate in us-east-1). */
  readonly edgeDomainName?: string;
  readonly edgeCertificateArn?: string;
  /** AWS WAF web ACL (scope CLOUDFRONT, in us-east-1) to attach to the distribution. */
  readonly edgeWebAclArn?: string;
  readonly edgeMemoryMiB: number;
  readonly edgeTimeoutSeconds: number;
  /** Reserved concurrency of the edge function; undefined leaves it unreserved. */
  readonly edgeReservedConcurrency?: number;
  /**
   * How CloudFront authenticates to the function URL. `oac` signs requests (function URL
   * auth AWS_IAM) but then every POST must carry `x-amz-content-sha256`, which OpenAI
   * clients do not send, and the signature replaces the client's `Authorization: Bearer` key;
   * `public` (default) leaves the URL open and relies on the edge's
   * own API-key check. See infra/README.md.
   */
  readonly edgeOriginAccess: 'public' | 'oac';
  /** Seconds CloudFront waits for the first byte from the function (60 without a quota raise). */
  readonly edgeOriginReadTimeoutSeconds: number;

  /** E-mail address subscribed to the alarm topic; none leaves the topic without subscribers. */
  readonly alarmEmail?: string;
  /** Admission warnings (realtime near its limit) per 5 minutes that raise the alarm. */
  readonly realtimeWarningThreshold: number;
}

export const DEFAULTS: Omit<SluiceConfig, 'region' | 'availabilityZones' | 'upstashSecretName'> = {
  stage: 'dev',
  vpcCidr: '10.42.0.0/16',
  natGateways: 1,
  gpuEndpoints: { 'sim-llm': ['http://127.0.0.1:9999/v1'] },
  rocketmqImage: 'apache/rocketmq:5.5.0',
  brokerCpu: 2048,
  brokerMemoryMiB: 8192,
  namesrvCpu: 512,
  namesrvMemoryMiB: 1024,
  proxyCpu: 1024,
  proxyMemoryMiB: 2048,
  proxyCount: 2,
  liteTopicTtlMinutes: 60,
  dispatcherCpu: 512,
  dispatcherMemoryMiB: 1024,
  dispatcherMinTasks: 2,
  dispatcherMaxTasks: 20,
  dispatcherBacklogPerTask: 200,
  dispatcherDrainSeconds: 120,
  edgeNodeMajor: 24,
  edgeMemoryMiB: 1024,
  edgeTimeoutSeconds: 300,
  edgeOriginAccess: 'public',
  edgeOriginReadTimeoutSeconds: 60,
  realtimeWarningThreshold: 50,
};

/** Reads one context value; JSON strings (from `-c key='{"a":1}'`) are parsed. */
type ContextReader = (key: string) => unknown;

function parsed(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (t.startsWith('{') || t.startsWith('[')) return JSON.parse(t) as unknown;
  return v;
}

function str(read: ContextReader, key: string): string | undefined {
  const v = read(key);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new Error(`context ${key}: expected a string, got ${JSON.stringify(v)}`);
  return v;
}

function num(read: ContextReader, key: string, dflt: number): number {
  const v = read(key);
  if (v === undefined || v === null || v === '') return dflt;
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isFinite(n)) throw new Error(`context ${key}: expected a number, got ${JSON.stringify(v)}`);
  return n;
}

function obj<T>(read: ContextReader, key: string): T | undefined {
  const v = parsed(read(key));
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'object') throw new Error(`context ${key}: expected JSON, got ${JSON.stringify(v)}`);
  return v as T;
}

/**
 * Builds the configuration from context. `env` supplies CDK_DEFAULT_ACCOUNT/REGION
 * (set by the CLI from the caller's credentials) when no account/region is in context.
 */
export function configFromContext(read: ContextReader, env: NodeJS.ProcessEnv = process.env): SluiceConfig {
  const stage = str(read, 'stage') ?? DEFAULTS.stage;
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(`context stage: lower-case letters, digits and '-', at most 20 characters (got ${stage})`);
  }
  const region = str(read, 'region') ?? env.CDK_DEFAULT_REGION ?? 'us-east-1';
  const account = str(read, 'account') ?? env.CDK_DEFAULT_ACCOUNT;
  // Never guessed: zone names are per account (a region's "a" may not exist for yours).
  const azs = obj<string[]>(read, 'availabilityZones');
  const edgeOriginAccess = str(read, 'edgeOriginAccess') ?? DEFAULTS.edgeOriginAccess;
  if (edgeOriginAccess !== 'public' && edgeOriginAccess !== 'oac') {
    throw new Error(`context edgeOriginAccess: 'public' or 'oac' (got ${edgeOriginAccess})`);
  }
  const dispatcherDrainSeconds = num(read, 'dispatcherDrainSeconds', DEFAULTS.dispatcherDrainSeconds);
  if (dispatcherDrainSeconds < MIN_DISPATCHER_DRAIN_SECONDS || dispatcherDrainSeconds > 120) {
    throw new Error(
      `context dispatcherDrainSeconds: between ${MIN_DISPATCHER_DRAIN_SECONDS} (a stopping dispatcher's receives, ` +
        `held up to ${PROXY_LONG_POLL_MS / 1000} s by the proxy, must end before it exits) and 120 (Fargate stopTimeout limit); got ${dispatcherDrainSeconds}`,
    );
  }
  const reserved = read('edgeReservedConcurrency');
  const existingVpc = obj<ExistingVpcConfig>(read, 'existingVpc');
  const brokerPublicTls = obj<BrokerPublicTlsConfig>(read, 'brokerPublicTls');
  const gpuApiKeySecretName = str(read, 'gpuApiKeySecretName');
  const existingBrokerEndpoint = str(read, 'existingBrokerEndpoint');
  const alarmEmail = str(read, 'alarmEmail');
  const edgeNodeMajor = num(read, 'edgeNodeMajor', DEFAULTS.edgeNodeMajor);
  if (edgeNodeMajor !== 20 && edgeNodeMajor !== 22 && edgeNodeMajor !== 24) {
    throw new Error(`context edgeNodeMajor: 20, 22 or 24 (got ${edgeNodeMajor})`);
  }
  const edgeDomainName = str(read, 'edgeDomainName');
  const edgeCertificateArn = str(read, 'edgeCertificateArn');
  if ((edgeDomainName === undefined) !== (edgeCertificateArn === undefined)) {
    throw new Error('context edgeDomainName and edgeCertificateArn go together');
  }
  const edgeWebAclArn = str(read, 'edgeWebAclArn');
  return {
    stage,
    ...(account !== undefined ? { account } : {}),
    region,
    ...((existingVpc?.availabilityZones ?? azs) ? { availabilityZones: existingVpc?.availabilityZones ?? azs } : {}),
    vpcCidr: str(read, 'vpcCidr') ?? DEFAULTS.vpcCidr,
    natGateways: num(read, 'natGateways', DEFAULTS.natGateways),
    ...(existingVpc ? { existingVpc } : {}),
    upstashSecretName: str(read, 'upstashSecretName') ?? `sluice/${stage}/upstash`,
    gpuEndpoints: obj<Record<string, string[]>>(read, 'gpuEndpoints') ?? DEFAULTS.gpuEndpoints,
    ...(gpuApiKeySecretName ? { gpuApiKeySecretName } : {}),
    ...(existingBrokerEndpoint ? { existingBrokerEndpoint } : {}),
    ...(brokerPublicTls ? { brokerPublicTls } : {}),
    rocketmqImage: str(read, 'rocketmqImage') ?? DEFAULTS.rocketmqImage,
    brokerCpu: num(read, 'brokerCpu', DEFAULTS.brokerCpu),
    brokerMemoryMiB: num(read, 'brokerMemoryMiB', DEFAULTS.brokerMemoryMiB),
    namesrvCpu: num(read, 'namesrvCpu', DEFAULTS.namesrvCpu),
    namesrvMemoryMiB: num(read, 'namesrvMemoryMiB', DEFAULTS.namesrvMemoryMiB),
    proxyCpu: num(read, 'proxyCpu', DEFAULTS.proxyCpu),
    proxyMemoryMiB: num(read, 'proxyMemoryMiB', DEFAULTS.proxyMemoryMiB),
    proxyCount: num(read, 'proxyCount', DEFAULTS.proxyCount),
    liteTopicTtlMinutes: Math.max(15, num(read, 'liteTopicTtlMinutes', DEFAULTS.liteTopicTtlMinutes)),
    dispatcherCpu: num(read, 'dispatcherCpu', DEFAULTS.dispatcherCpu),
    dispatcherMemoryMiB: num(read, 'dispatcherMemoryMiB', DEFAULTS.dispatcherMemoryMiB),
    dispatcherMinTasks: num(read, 'dispatcherMinTasks', DEFAULTS.dispatcherMinTasks),
    dispatcherMaxTasks: num(read, 'dispatcherMaxTasks', DEFAULTS.dispatcherMaxTasks),
    dispatcherBacklogPerTask: num(read, 'dispatcherBacklogPerTask', DEFAULTS.dispatcherBacklogPerTask),
    dispatcherDrainSeconds,
    edgeNodeMajor,
    ...(edgeDomainName && edgeCertificateArn ? { edgeDomainName, edgeCertificateArn } : {}),
    ...(edgeWebAclArn ? { edgeWebAclArn } : {}),
    edgeMemoryMiB: num(read, 'edgeMemoryMiB', DEFAULTS.edgeMemoryMiB),
    edgeTimeoutSeconds: num(read, 'edgeTimeoutSeconds', DEFAULTS.edgeTimeoutSeconds),
    ...(reserved !== undefined && reserved !== null && reserved !== ''
      ? { edgeReservedConcurrency: num(read, 'edgeReservedConcurrency', 0) }
      : {}),
    edgeOriginAccess,
    edgeOriginReadTimeoutSeconds: num(read, 'edgeOriginReadTimeoutSeconds', DEFAULTS.edgeOriginReadTimeoutSeconds),
    ...(alarmEmail ? { alarmEmail } : {}),
    realtimeWarningThreshold: num(read, 'realtimeWarningThreshold', DEFAULTS.realtimeWarningThreshold),
  };
}

/** The SSM path all policy parameters of a stage live under (no trailing slash). */
export function policyPath(stage: string): string {
  return `/sluice/${stage}`;
}

/** Names shared by the broker, the edge and the dispatchers. */
export const ROCKETMQ = {
  parentTopic: 'sluice-requests',
  consumerGroup: 'sluice-dispatchers',
  clusterName: 'DefaultCluster',
  grpcPort: 8081,
  remotingPort: 8080,
  namesrvPort: 9876,
  brokerPort: 10911,
} as const;

/**
 * Of a dispatcher task's stop timeout, what is kept after the drain for cutting calls,
 * closing parts and exiting (lib/dispatch/drain.ts: grace + exit), and a second to spare.
 */
export const DISPATCHER_EXIT_SECONDS = Math.ceil((DRAIN_GRACE_MS + DRAIN_EXIT_MS) / 1000) + 1;

/**
 * The shortest stop timeout: the drain (stop timeout less the exit) outlasts the receives
 * in flight when it begins, with 5 s to spare for their answers.
 */
export const MIN_DISPATCHER_DRAIN_SECONDS = PROXY_LONG_POLL_MS / 1000 + 5 + DISPATCHER_EXIT_SECONDS;
