import { Stack, type StackProps, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr_assets from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { IgnoreMode } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { DISPATCHER_EXIT_SECONDS, ROCKETMQ } from '../config.ts';
import { ROCKETMQ_CA_FILE, runtimeEnv, SECRET_FIELDS, type ConfigName } from '../../functions/runtime/contract.ts';
import { METRICS, SLUICE_NAMESPACE } from '../metrics.ts';

/** ECS secrets land in the environment: their names are runtime names too. */
type RuntimeSecrets = { [K in ConfigName]?: ecs.Secret };
import { ConfigStack } from './config-stack.ts';

export interface DispatchersStackProps extends StackProps {
  readonly stage: string;
  readonly vpc: ec2.IVpc;
  /** Repository root: the Docker build context. */
  readonly repoRoot: string;
  /** Dockerfile, relative to the repository root. */
  readonly dockerfile: string;
  readonly brokerEndpoint: string;
  readonly brokerCredentials?: secretsmanager.ISecret;
  /** `{ca}` of the Broker stack's proxies: the dispatchers connect over TLS and trust only this CA. */
  readonly brokerCa?: secretsmanager.ISecret;
  readonly parameterPath: string;
  readonly upstashSecret: secretsmanager.ISecret;
  readonly gpuApiKeySecret?: secretsmanager.ISecret;
  readonly spillover: sqs.IQueue;
  readonly deadLetter: sqs.IQueue;
  readonly cpu: number;
  readonly memoryMiB: number;
  readonly minTasks: number;
  readonly maxTasks: number;
  readonly backlogPerTask: number;
  readonly drainSeconds: number;
}

/**
 * The dispatchers: a Fargate service built from functions/dispatcher/Dockerfile that
 * consumes every LiteTopic through the wildcard group, paces with Suspend, and calls the
 * GPU endpoints. It also runs the spillover redrive worker. Scales on the backlog the
 * dispatchers report and on CPU; on scale-in a task gets `drainSeconds` after SIGTERM.
 */
export class DispatchersStack extends Stack {
  readonly service: ecs.FargateService;
  readonly cluster: ecs.Cluster;
  readonly backlogMetric: cloudwatch.Metric;
  readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props: DispatchersStackProps) {
    super(scope, id, props);
    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: props.vpc,
      clusterName: `sluice-${props.stage}-dispatchers`,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const td = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: props.cpu,
      memoryLimitMiB: props.memoryMiB,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const secrets: RuntimeSecrets = {
      // Injected by the ECS agent at task start from Secrets Manager: never in the template.
      UPSTASH_REDIS_REST_URL: ecs.Secret.fromSecretsManager(props.upstashSecret, SECRET_FIELDS.upstash.url),
      UPSTASH_REDIS_REST_TOKEN: ecs.Secret.fromSecretsManager(props.upstashSecret, SECRET_FIELDS.upstash.token),
    };
    if (props.gpuApiKeySecret) {
      secrets.SLUICE_UPSTREAM_API_KEY = ecs.Secret.fromSecretsManager(
        props.gpuApiKeySecret,
        SECRET_FIELDS.upstream.apiKey,
      );
    }
    if (props.brokerCredentials) {
      secrets.SLUICE_ROCKETMQ_ACCESS_KEY = ecs.Secret.fromSecretsManager(
        props.brokerCredentials,
        SECRET_FIELDS.rocketmq.username,
      );
      secrets.SLUICE_ROCKETMQ_SECRET_KEY = ecs.Secret.fromSecretsManager(
        props.brokerCredentials,
        SECRET_FIELDS.rocketmq.password,
      );
    }
    if (props.brokerCa)
      secrets.SLUICE_ROCKETMQ_CA_CERT = ecs.Secret.fromSecretsManager(props.brokerCa, SECRET_FIELDS.proxyCa.cert);
    td.addContainer('dispatcher', {
      image: ecs.ContainerImage.fromAsset(props.repoRoot, {
        file: props.dockerfile,
        // Only what the image build needs, so the asset hash ignores node_modules, cdk.out, tests.
        ignoreMode: IgnoreMode.DOCKER,
        // The tasks run on X86_64; say so, so a deploy from an arm64 machine builds the right image.
        platform: ecr_assets.Platform.LINUX_AMD64,
        exclude: ['*', '!package.json', '!package-lock.json', '!tsconfig.json', '!lib', '!functions'],
      }),
      environment: runtimeEnv({
        SLUICE_STAGE: props.stage,
        SLUICE_POLICY_SSM_PATH: `${props.parameterPath}/policy`,
        SLUICE_ROCKETMQ_ENDPOINTS: props.brokerEndpoint,
        SLUICE_ROCKETMQ_TOPIC: ROCKETMQ.parentTopic,
        SLUICE_ROCKETMQ_GROUP: ROCKETMQ.consumerGroup,
        // The Broker stack's proxies take TLS only; an existing broker is dialed as it was given.
        ...(props.brokerCa ? { SLUICE_ROCKETMQ_TLS: 'true', GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: ROCKETMQ_CA_FILE } : {}),
        SLUICE_SPILLOVER_QUEUE_URL: props.spillover.queueUrl,
        SLUICE_DLQ_URL: props.deadLetter.queueUrl,
        // GPU endpoints reach the dispatchers through the policy (policy/models, seeded from gpuEndpoints).
        SLUICE_DRAIN_MS: String((props.drainSeconds - DISPATCHER_EXIT_SECONDS) * 1000),
      }),
      secrets,
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'dispatcher' }),
      stopTimeout: Duration.seconds(props.drainSeconds),
      readonlyRootFilesystem: false,
    });

    const sg = (this.securityGroup = new ec2.SecurityGroup(this, 'Sg', {
      vpc: props.vpc,
      description: 'Sluice dispatchers: egress to the broker, Upstash, GPU endpoints and AWS APIs',
      allowAllOutbound: true,
    }));
    this.service = new ecs.FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: td,
      // No desiredCount: the autoscaler owns it, so a deploy during a burst does not reset it
      // (CloudFormation starts a new service at 1; the scalable target raises it to minTasks).
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      securityGroups: [sg],
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
    });

    // Least privilege: the stage's policy path, these two queues, these secrets.
    ConfigStack.grantPolicyRead(td.taskRole, this, props.parameterPath);
    props.spillover.grantConsumeMessages(td.taskRole);
    props.spillover.grantSendMessages(td.taskRole);
    props.deadLetter.grantSendMessages(td.taskRole);

    const scaling = this.service.autoScaleTaskCount({ minCapacity: props.minTasks, maxCapacity: props.maxTasks });
    scaling.scaleOnCpuUtilization('Cpu', {
      targetUtilizationPercent: 60,
      scaleInCooldown: Duration.seconds(120),
      scaleOutCooldown: Duration.seconds(30),
    });
    this.backlogMetric = new cloudwatch.Metric({
      namespace: SLUICE_NAMESPACE,
      metricName: METRICS.dispatcherBacklog,
      dimensionsMap: { Stage: props.stage },
      statistic: 'Maximum',
      period: Duration.minutes(1),
    });
    const b = props.backlogPerTask;
    scaling.scaleOnMetric('Backlog', {
      metric: this.backlogMetric,
      adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      scalingSteps: [
        { upper: b / 4, change: -1 },
        { lower: b, change: +1 },
        { lower: 4 * b, change: +3 },
        { lower: 16 * b, change: +6 },
      ],
      cooldown: Duration.seconds(60),
      evaluationPeriods: 2,
    });
  }
}
