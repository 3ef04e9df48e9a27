import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type App, type Environment, Tags } from 'aws-cdk-lib';
import { type SluiceConfig, policyPath } from './config.ts';
import { edgeMaxSyncWaitMs, seedPolicy } from './seed-policy.ts';
import { BrokerStack } from './stacks/broker-stack.ts';
import { ConfigStack } from './stacks/config-stack.ts';
import { DispatchersStack } from './stacks/dispatchers-stack.ts';
import { EdgeStack } from './stacks/edge-stack.ts';
import { NetworkStack } from './stacks/network-stack.ts';
import { ObservabilityStack } from './stacks/observability-stack.ts';
import { QueuesStack } from './stacks/queues-stack.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const EDGE_ENTRY = path.join(REPO_ROOT, 'functions/edge/lambda.ts');
export const DISPATCHER_DOCKERFILE = 'functions/dispatcher/Dockerfile';

export interface SluiceStacks {
  readonly network: NetworkStack;
  readonly config: ConfigStack;
  readonly queues: QueuesStack;
  readonly broker?: BrokerStack;
  readonly dispatchers: DispatchersStack;
  readonly edge: EdgeStack;
  readonly observability: ObservabilityStack;
}

/**
 * Adds one region's Sluice to the app: every stack is named `Sluice-<stage>-<Concern>`
 * (plus the region when `regionSuffix` is set, for a second region in the same app).
 */
export function addSluice(app: App, cfg: SluiceConfig, opts: { regionSuffix?: boolean } = {}): SluiceStacks {
  const env: Environment = { region: cfg.region, ...(cfg.account ? { account: cfg.account } : {}) };
  const prefix = `Sluice-${cfg.stage}${opts.regionSuffix ? `-${cfg.region}` : ''}`;
  const base = { env, stage: cfg.stage };
  const paramPath = policyPath(cfg.stage);

  const network = new NetworkStack(app, `${prefix}-Network`, {
    ...base,
    description: `Sluice ${cfg.stage}: VPC for the broker and the dispatchers`,
    ...(cfg.availabilityZones ? { availabilityZones: cfg.availabilityZones } : {}),
    vpcCidr: cfg.vpcCidr,
    natGateways: cfg.natGateways,
    ...(cfg.existingVpc ? { existingVpc: cfg.existingVpc } : {}),
  });
  const config = new ConfigStack(app, `${prefix}-Config`, {
    ...base,
    description: `Sluice ${cfg.stage}: policy parameters (SSM) and secret references`,
    parameterPath: paramPath,
    seed: seedPolicy(cfg.gpuEndpoints, { syncWaitLimitMs: edgeMaxSyncWaitMs(cfg.edgeTimeoutSeconds) }),
    upstashSecretName: cfg.upstashSecretName,
    ...(cfg.gpuApiKeySecretName ? { gpuApiKeySecretName: cfg.gpuApiKeySecretName } : {}),
  });
  const queues = new QueuesStack(app, `${prefix}-Queues`, {
    ...base,
    description: `Sluice ${cfg.stage}: SQS spillover and dead-letter queues`,
  });

  let broker: BrokerStack | undefined;
  let brokerEndpoint: string;
  if (cfg.existingBrokerEndpoint) {
    brokerEndpoint = cfg.existingBrokerEndpoint;
  } else {
    broker = new BrokerStack(app, `${prefix}-Broker`, {
      ...base,
      description: `Sluice ${cfg.stage}: Apache RocketMQ 5.5 (namesrv x2, broker on EFS, proxies behind an NLB)`,
      vpc: network.vpc,
      image: cfg.rocketmqImage,
      namesrvCpu: cfg.namesrvCpu,
      namesrvMemoryMiB: cfg.namesrvMemoryMiB,
      brokerCpu: cfg.brokerCpu,
      brokerMemoryMiB: cfg.brokerMemoryMiB,
      proxyCpu: cfg.proxyCpu,
      proxyMemoryMiB: cfg.proxyMemoryMiB,
      proxyCount: cfg.proxyCount,
      liteTopicTtlMinutes: cfg.liteTopicTtlMinutes,
      ...(cfg.brokerPublicTls ? { publicTls: cfg.brokerPublicTls } : {}),
    });
    brokerEndpoint = broker.endpoint;
  }

  const dispatchers = new DispatchersStack(app, `${prefix}-Dispatchers`, {
    ...base,
    description: `Sluice ${cfg.stage}: dispatcher service (Fargate)`,
    vpc: network.vpc,
    repoRoot: REPO_ROOT,
    dockerfile: DISPATCHER_DOCKERFILE,
    brokerEndpoint,
    ...(broker ? { brokerCredentials: broker.dispatcherCredentials, brokerCa: broker.proxyCaSecret } : {}),
    parameterPath: paramPath,
    upstashSecret: config.upstashSecret,
    ...(config.gpuApiKeySecret ? { gpuApiKeySecret: config.gpuApiKeySecret } : {}),
    spillover: queues.spillover,
    deadLetter: queues.deadLetter,
    cpu: cfg.dispatcherCpu,
    memoryMiB: cfg.dispatcherMemoryMiB,
    minTasks: cfg.dispatcherMinTasks,
    maxTasks: cfg.dispatcherMaxTasks,
    backlogPerTask: cfg.dispatcherBacklogPerTask,
    drainSeconds: cfg.dispatcherDrainSeconds,
  });

  // The edge runs outside the VPC: it reaches the broker only through a public TLS
  // endpoint (ours, or an existing one); without one it spills every request to SQS.
  broker?.allowProxyClient({ securityGroup: dispatchers.securityGroup, description: 'the dispatchers' });

  const edgeBrokerEndpoint = broker ? broker.publicEndpoint : cfg.existingBrokerEndpoint;
  const edge = new EdgeStack(app, `${prefix}-Edge`, {
    ...base,
    description: `Sluice ${cfg.stage}: edge function (streaming function URL) behind CloudFront`,
    entry: EDGE_ENTRY,
    lockFile: path.join(REPO_ROOT, 'package-lock.json'),
    parameterPath: paramPath,
    upstashSecret: config.upstashSecret,
    spillover: queues.spillover,
    ...(edgeBrokerEndpoint ? { brokerEndpoint: edgeBrokerEndpoint } : {}),
    ...(broker?.edgeCredentials ? { brokerCredentials: broker.edgeCredentials } : {}),
    nodeMajor: cfg.edgeNodeMajor,
    ...(cfg.edgeDomainName && cfg.edgeCertificateArn
      ? { domainName: cfg.edgeDomainName, certificateArn: cfg.edgeCertificateArn }
      : {}),
    ...(cfg.edgeWebAclArn ? { webAclArn: cfg.edgeWebAclArn } : {}),
    memoryMiB: cfg.edgeMemoryMiB,
    timeoutSeconds: cfg.edgeTimeoutSeconds,
    ...(cfg.edgeReservedConcurrency !== undefined ? { reservedConcurrency: cfg.edgeReservedConcurrency } : {}),
    originAccess: cfg.edgeOriginAccess,
    originReadTimeoutSeconds: cfg.edgeOriginReadTimeoutSeconds,
  });

  const observability = new ObservabilityStack(app, `${prefix}-Observability`, {
    ...base,
    description: `Sluice ${cfg.stage}: dashboard and alarms`,
    spillover: queues.spillover,
    spilloverDeadLetter: queues.spilloverDeadLetter,
    edgeSpillsByDesign: edgeBrokerEndpoint === undefined,
    deadLetter: queues.deadLetter,
    edgeFunction: edge.fn,
    dispatcherService: dispatchers.service,
    dispatcherBacklog: dispatchers.backlogMetric,
    ...(broker
      ? {
          broker: {
            proxyTargetGroup: broker.proxyTargetGroup,
            loadBalancer: broker.loadBalancer,
            brokerService: broker.brokerService,
            clusterName: broker.cluster.clusterName,
          },
        }
      : {}),
    ...(cfg.alarmEmail ? { alarmEmail: cfg.alarmEmail } : {}),
    realtimeWarningThreshold: cfg.realtimeWarningThreshold,
  });

  const stacks: SluiceStacks = {
    network,
    config,
    queues,
    ...(broker ? { broker } : {}),
    dispatchers,
    edge,
    observability,
  };
  for (const s of Object.values(stacks)) {
    Tags.of(s).add('project', 'sluice');
    Tags.of(s).add('stage', cfg.stage);
  }
  return stacks;
}
