import { Stack, type StackProps, Duration, RemovalPolicy, CfnOutput } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as efs from 'aws-cdk-lib/aws-efs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as servicediscovery from 'aws-cdk-lib/aws-servicediscovery';
import type { Construct, IConstruct } from 'constructs';
import { ROCKETMQ, type BrokerPublicTlsConfig } from '../config.ts';
import { ProxyTlsCertificate } from '../constructs/proxy-tls-certificate.ts';
import { brokerScript, initScript, namesrvScript, PROXY_TLS, proxyScript } from '../constructs/rocketmq-scripts.ts';
import { RunTaskToCompletion } from '../constructs/run-task-to-completion.ts';
import { ROCKETMQ_ROLES, type RocketMQRole } from '../rocketmq/acl.ts';
import { SECRET_FIELDS } from '../../functions/runtime/contract.ts';

export interface BrokerStackProps extends StackProps {
  readonly stage: string;
  readonly vpc: ec2.IVpc;
  readonly image: string;
  readonly namesrvCpu: number;
  readonly namesrvMemoryMiB: number;
  readonly brokerCpu: number;
  readonly brokerMemoryMiB: number;
  readonly proxyCpu: number;
  readonly proxyMemoryMiB: number;
  readonly proxyCount: number;
  readonly liteTopicTtlMinutes: number;
  /** Also expose the proxies on an internet-facing TLS listener, with ACL credentials required. */
  readonly publicTls?: BrokerPublicTlsConfig;
}

const STORE_DIR = '/home/rocketmq/store';
/** uid/gid of the `rocketmq` user in the official image. */
const ROCKETMQ_UID = '3000';

function tcpHealthCheck(port: number): ecs.HealthCheck {
  return {
    // bash's /dev/tcp where the image has bash (the Ubuntu/CentOS builds), busybox nc otherwise.
    command: ['CMD-SHELL', `bash -c '</dev/tcp/127.0.0.1/${port}' 2>/dev/null || nc -z 127.0.0.1 ${port} || exit 1`],
    interval: Duration.seconds(15),
    timeout: Duration.seconds(5),
    retries: 4,
    startPeriod: Duration.seconds(90),
  };
}

/**
 * A regional Apache RocketMQ 5.5 cluster on Fargate: two name servers (each its own
 * service with a stable Cloud Map name), one broker whose store is on EFS (survives
 * task replacement; the service never runs two brokers on the same store), and
 * cluster-mode proxies behind an internal NLB (gRPC). On deploy, a one-off task creates
 * the LITE parent topic and the wildcard consumer group.
 */
export class BrokerStack extends Stack {
  /** `host:port` of the internal gRPC endpoint (dispatchers). */
  readonly endpoint: string;
  /** `host:port` of the public TLS endpoint (edge), when enabled. */
  readonly publicEndpoint?: string;
  /** The ACL 2.0 super user (`username`, `password`): the RocketMQ processes and the init task only. */
  readonly credentials: secretsmanager.ISecret;
  /** The dispatchers' user: consume the group, send to the parent topic (infra/rocketmq/acl.ts). */
  readonly dispatcherCredentials: secretsmanager.ISecret;
  /** The edge's user, with the public endpoint: send to the parent topic only. */
  readonly edgeCredentials?: secretsmanager.ISecret;
  readonly cluster: ecs.Cluster;
  readonly brokerService: ecs.FargateService;
  readonly proxyService: ecs.FargateService;
  readonly proxyTargetGroup: elbv2.NetworkTargetGroup;
  readonly loadBalancer: elbv2.NetworkLoadBalancer;
  readonly securityGroup: ec2.SecurityGroup;
  /** The internal NLB's: clients are admitted here (allowProxyClient), the proxies admit only the NLBs. */
  readonly proxyNlbSecurityGroup: ec2.SecurityGroup;
  /** `{ca}`: the CA certificate the proxies' TLS certificate chains to; clients inside the VPC trust only it. */
  readonly proxyCaSecret: secretsmanager.ISecret;
  /** `{cert, key}`: the proxies' certificate and key; the proxy tasks only. */
  readonly proxyTlsSecret: secretsmanager.ISecret;
  readonly publicNlbSecurityGroup?: ec2.SecurityGroup;
  readonly taskDefinitions: ecs.FargateTaskDefinition[] = [];
  /** Role of the handler behind the init custom resource (runs the task and waits for its exit). */
  readonly initFunctionRole: IConstruct;
  readonly publicLogBucket?: s3.Bucket;

  constructor(scope: Construct, id: string, props: BrokerStackProps) {
    super(scope, id, props);
    const { vpc, stage } = props;
    const privateSubnets: ec2.SubnetSelection = { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS };

    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc,
      clusterName: `sluice-${stage}-rocketmq`,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });
    const namespace = new servicediscovery.PrivateDnsNamespace(this, 'Namespace', {
      name: `rocketmq.sluice-${stage}.internal`,
      vpc,
    });
    const sg = (this.securityGroup = new ec2.SecurityGroup(this, 'RocketMqSg', {
      vpc,
      description: 'RocketMQ namesrv, broker and proxy tasks',
      allowAllOutbound: true,
    }));
    sg.addIngressRule(sg, ec2.Port.allTcp(), 'RocketMQ components talk to each other');
    // The proxies take gRPC from the load balancers only (their security groups: traffic and health
    // checks), and the internal NLB from the clients given to allowProxyClient: not the whole VPC.
    const nlbSg = (this.proxyNlbSecurityGroup = new ec2.SecurityGroup(this, 'ProxyNlbSg', {
      vpc,
      description: 'Internal NLB of the RocketMQ proxies: gRPC (TLS) from the Sluice clients',
      allowAllOutbound: false,
    }));
    nlbSg.addEgressRule(sg, ec2.Port.tcp(ROCKETMQ.grpcPort), 'to the proxies (traffic and health checks)');
    sg.addIngressRule(nlbSg, ec2.Port.tcp(ROCKETMQ.grpcPort), 'proxy gRPC from the internal NLB');

    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const image = ecs.ContainerImage.fromRegistry(props.image);

    // ACL 2.0 in every layout: inside the VPC too, no process may enqueue or read without its user.
    const userSecret = (id: string, role: string, username: string, description: string) =>
      new secretsmanager.Secret(this, id, {
        secretName: `sluice/${stage}/rocketmq/${role}`,
        description: `Sluice ${stage}: RocketMQ ACL user ${username} (${description})`,
        generateSecretString: {
          secretStringTemplate: JSON.stringify({ [SECRET_FIELDS.rocketmq.username]: username }),
          generateStringKey: SECRET_FIELDS.rocketmq.password,
          excludePunctuation: true,
          passwordLength: 32,
        },
      });
    this.credentials = userSecret(
      'Credentials',
      'admin',
      'sluice',
      'super user of the RocketMQ processes and the init task',
    );
    this.dispatcherCredentials = userSecret(
      'DispatcherCredentials',
      'dispatchers',
      ROCKETMQ_ROLES.dispatchers.username,
      'consumes the group',
    );
    if (props.publicTls)
      this.edgeCredentials = userSecret(
        'EdgeCredentials',
        'edge',
        ROCKETMQ_ROLES.edge.username,
        'sends to the parent topic',
      );
    const authSecrets: Record<string, ecs.Secret> = {
      RMQ_USER: ecs.Secret.fromSecretsManager(this.credentials, SECRET_FIELDS.rocketmq.username),
      RMQ_PASSWORD: ecs.Secret.fromSecretsManager(this.credentials, SECRET_FIELDS.rocketmq.password),
    };
    // The init task creates the role users with their passwords from their secrets.
    const roleSecrets: Record<string, ecs.Secret> = {};
    const roles: RocketMQRole[] = [ROCKETMQ_ROLES.dispatchers];
    for (const [role, secret] of [
      [ROCKETMQ_ROLES.dispatchers, this.dispatcherCredentials],
      ...(this.edgeCredentials ? [[ROCKETMQ_ROLES.edge, this.edgeCredentials] as const] : []),
    ] as const) {
      roleSecrets[role.env.user] = ecs.Secret.fromSecretsManager(secret, SECRET_FIELDS.rocketmq.username);
      roleSecrets[role.env.password] = ecs.Secret.fromSecretsManager(secret, SECRET_FIELDS.rocketmq.password);
    }
    if (this.edgeCredentials) roles.push(ROCKETMQ_ROLES.edge);

    // --- name servers: two services so each has a stable DNS name in the broker's list.
    const namesrvNames = ['namesrv-a', 'namesrv-b'];
    const namesrvAddr = namesrvNames.map((n) => `${n}.${namespace.namespaceName}:${ROCKETMQ.namesrvPort}`).join(';');
    let previous: ecs.FargateService | undefined;
    for (const name of namesrvNames) {
      const td = new ecs.FargateTaskDefinition(this, `${name}-task`, {
        cpu: props.namesrvCpu,
        memoryLimitMiB: props.namesrvMemoryMiB,
        runtimePlatform: {
          cpuArchitecture: ecs.CpuArchitecture.X86_64,
          operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
        },
      });
      td.addContainer('namesrv', {
        image,
        entryPoint: ['sh', '-c'],
        command: [namesrvScript()],
        environment: {
          JAVA_OPT_EXT: `-Xms${Math.floor(props.namesrvMemoryMiB / 2)}m -Xmx${Math.floor(props.namesrvMemoryMiB / 2)}m`,
        },
        portMappings: [{ containerPort: ROCKETMQ.namesrvPort }],
        healthCheck: tcpHealthCheck(ROCKETMQ.namesrvPort),
        logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: name }),
        readonlyRootFilesystem: false,
      });
      const service = new ecs.FargateService(this, name, {
        cluster: this.cluster,
        taskDefinition: td,
        desiredCount: 1,
        vpcSubnets: privateSubnets,
        securityGroups: [sg],
        cloudMapOptions: {
          cloudMapNamespace: namespace,
          name,
          dnsRecordType: servicediscovery.DnsRecordType.A,
          dnsTtl: Duration.seconds(10),
        },
        circuitBreaker: { rollback: true },
        // Start the replacement before stopping the old task, and update one name server at a
        // time (the dependency below), so the broker always has one to register with.
        minHealthyPercent: 100,
        maxHealthyPercent: 200,
      });
      if (previous) service.node.addDependency(previous);
      previous = service;
    }

    // --- broker: one master whose store lives on EFS.
    const fsSg = new ec2.SecurityGroup(this, 'StoreSg', {
      vpc,
      description: 'RocketMQ broker store (EFS)',
      allowAllOutbound: false,
    });
    fsSg.addIngressRule(sg, ec2.Port.tcp(2049), 'NFS from the broker task');
    const fileSystem = new efs.FileSystem(this, 'Store', {
      vpc,
      vpcSubnets: privateSubnets,
      securityGroup: fsSg,
      encrypted: true,
      performanceMode: efs.PerformanceMode.GENERAL_PURPOSE,
      throughputMode: efs.ThroughputMode.ELASTIC,
      enableAutomaticBackups: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const accessPoint = fileSystem.addAccessPoint('StoreAccess', {
      path: '/rocketmq-store',
      posixUser: { uid: ROCKETMQ_UID, gid: ROCKETMQ_UID },
      createAcl: { ownerUid: ROCKETMQ_UID, ownerGid: ROCKETMQ_UID, permissions: '750' },
    });
    const brokerTd = new ecs.FargateTaskDefinition(this, 'broker-task', {
      cpu: props.brokerCpu,
      memoryLimitMiB: props.brokerMemoryMiB,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
      volumes: [
        {
          name: 'store',
          efsVolumeConfiguration: {
            fileSystemId: fileSystem.fileSystemId,
            transitEncryption: 'ENABLED',
            authorizationConfig: { accessPointId: accessPoint.accessPointId, iam: 'ENABLED' },
          },
        },
      ],
    });
    fileSystem.grant(brokerTd.taskRole, 'elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite');
    const heap = Math.floor(props.brokerMemoryMiB / 4);
    const brokerContainer = brokerTd.addContainer('broker', {
      image,
      entryPoint: ['sh', '-c'],
      command: [brokerScript({ namesrvAddr, storeDir: STORE_DIR })],
      environment: { JAVA_OPT_EXT: `-Xms${heap}m -Xmx${heap}m -XX:MaxDirectMemorySize=${heap}m` },
      secrets: authSecrets,
      portMappings: [{ containerPort: ROCKETMQ.brokerPort }, { containerPort: ROCKETMQ.brokerPort - 2 }],
      healthCheck: tcpHealthCheck(ROCKETMQ.brokerPort),
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'broker' }),
      stopTimeout: Duration.seconds(120),
    });
    brokerContainer.addMountPoints({ containerPath: STORE_DIR, sourceVolume: 'store', readOnly: false });
    this.brokerService = new ecs.FargateService(this, 'broker', {
      cluster: this.cluster,
      taskDefinition: brokerTd,
      desiredCount: 1,
      vpcSubnets: privateSubnets,
      securityGroups: [sg],
      cloudMapOptions: {
        cloudMapNamespace: namespace,
        name: 'broker',
        dnsRecordType: servicediscovery.DnsRecordType.A,
        dnsTtl: Duration.seconds(10),
      },
      // One writer per store: stop the old broker before starting the new one.
      minHealthyPercent: 0,
      maxHealthyPercent: 100,
      circuitBreaker: { rollback: true },
    });

    // --- proxies (cluster mode) behind an internal NLB.
    // The NLB first: its DNS name, which the dispatchers dial, is the certificate's name.
    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'ProxyNlb', {
      vpc,
      internetFacing: false,
      vpcSubnets: privateSubnets,
      crossZoneEnabled: true,
      securityGroups: [nlbSg],
    });
    const tlsCert = new ProxyTlsCertificate(this, 'ProxyTls', {
      stage,
      dnsName: this.loadBalancer.loadBalancerDnsName,
      validityDays: 3650,
    });
    this.proxyCaSecret = tlsCert.caSecret;
    this.proxyTlsSecret = tlsCert.serverSecret;
    const proxyTd = new ecs.FargateTaskDefinition(this, 'proxy-task', {
      cpu: props.proxyCpu,
      memoryLimitMiB: props.proxyMemoryMiB,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    proxyTd.addContainer('proxy', {
      image,
      entryPoint: ['sh', '-c'],
      command: [proxyScript(namesrvAddr)],
      environment: {
        JAVA_OPT_EXT: `-Xms${Math.floor(props.proxyMemoryMiB / 2)}m -Xmx${Math.floor(props.proxyMemoryMiB / 2)}m ${PROXY_TLS.jvmOptions}`,
      },
      secrets: {
        ...authSecrets,
        [PROXY_TLS.env.cert]: ecs.Secret.fromSecretsManager(tlsCert.serverSecret, SECRET_FIELDS.proxyTls.cert),
        [PROXY_TLS.env.key]: ecs.Secret.fromSecretsManager(tlsCert.serverSecret, SECRET_FIELDS.proxyTls.key),
      },
      portMappings: [{ containerPort: ROCKETMQ.grpcPort }, { containerPort: ROCKETMQ.remotingPort }],
      healthCheck: tcpHealthCheck(ROCKETMQ.grpcPort),
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'proxy' }),
      stopTimeout: Duration.seconds(60),
    });
    this.proxyService = new ecs.FargateService(this, 'proxy', {
      cluster: this.cluster,
      taskDefinition: proxyTd,
      desiredCount: props.proxyCount,
      vpcSubnets: privateSubnets,
      securityGroups: [sg],
      minHealthyPercent: 50,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
    });
    // A proxy task starts only once its certificate is in the secret.
    this.proxyService.node.addDependency(this.brokerService, tlsCert.resource);

    const listener = this.loadBalancer.addListener('Grpc', { port: ROCKETMQ.grpcPort, protocol: elbv2.Protocol.TCP });
    this.proxyTargetGroup = listener.addTargets('Proxies', {
      port: ROCKETMQ.grpcPort,
      protocol: elbv2.Protocol.TCP,
      targets: [this.proxyService.loadBalancerTarget({ containerName: 'proxy', containerPort: ROCKETMQ.grpcPort })],
      healthCheck: {
        protocol: elbv2.Protocol.TCP,
        interval: Duration.seconds(10),
        healthyThresholdCount: 2,
        unhealthyThresholdCount: 2,
      },
      deregistrationDelay: Duration.seconds(30),
    });
    this.endpoint = `${this.loadBalancer.loadBalancerDnsName}:${ROCKETMQ.grpcPort}`;

    if (props.publicTls) {
      const logs = (this.publicLogBucket = new s3.Bucket(this, 'PublicNlbLogs', {
        encryption: s3.BucketEncryption.S3_MANAGED,
        blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
        enforceSSL: true,
        lifecycleRules: [{ expiration: Duration.days(90) }],
        removalPolicy: RemovalPolicy.RETAIN,
      }));
      const publicSg = (this.publicNlbSecurityGroup = new ec2.SecurityGroup(this, 'PublicNlbSg', {
        vpc,
        description: 'Public NLB of the RocketMQ proxies: TLS from the edge (Lambda, outside the VPC)',
        allowAllOutbound: false,
      }));
      // The edge runs outside the VPC with no fixed address: the listener is the public TLS entry,
      // guarded by TLS 1.3 and the ACL users' credentials.
      publicSg.addIngressRule(ec2.Peer.anyIpv4(), ec2.Port.tcp(ROCKETMQ.grpcPort), 'gRPC over TLS from the edge');
      publicSg.addEgressRule(sg, ec2.Port.tcp(ROCKETMQ.grpcPort), 'to the proxies (traffic and health checks)');
      sg.addIngressRule(publicSg, ec2.Port.tcp(ROCKETMQ.grpcPort), 'proxy gRPC from the public NLB');
      const publicNlb = new elbv2.NetworkLoadBalancer(this, 'PublicNlb', {
        vpc,
        internetFacing: true,
        vpcSubnets: { subnetType: ec2.SubnetType.PUBLIC },
        crossZoneEnabled: true,
        securityGroups: [publicSg],
      });
      publicNlb.logAccessLogs(logs, 'public-nlb');
      const tls = publicNlb.addListener('GrpcTls', {
        port: ROCKETMQ.grpcPort,
        protocol: elbv2.Protocol.TLS,
        certificates: [elbv2.ListenerCertificate.fromArn(props.publicTls.certificateArn)],
        sslPolicy: elbv2.SslPolicy.TLS13_13,
        alpnPolicy: elbv2.AlpnPolicy.HTTP2_PREFERRED,
      });
      tls.addTargets('PublicProxies', {
        port: ROCKETMQ.grpcPort,
        // The proxies refuse plaintext: the NLB opens TLS to them again (it does not check their certificate).
        protocol: elbv2.Protocol.TLS,
        targets: [this.proxyService.loadBalancerTarget({ containerName: 'proxy', containerPort: ROCKETMQ.grpcPort })],
        healthCheck: { protocol: elbv2.Protocol.TCP, interval: Duration.seconds(10) },
        deregistrationDelay: Duration.seconds(30),
      });
      this.publicEndpoint = `${props.publicTls.domainName}:${ROCKETMQ.grpcPort}`;
      new CfnOutput(this, 'PublicNlbDnsName', {
        value: publicNlb.loadBalancerDnsName,
        description: `CNAME ${props.publicTls.domainName} to this name`,
      });
    }

    // --- one-off init task: LITE parent topic + wildcard consumer group.
    const initTd = new ecs.FargateTaskDefinition(this, 'init-task', {
      cpu: 512,
      memoryLimitMiB: 1024,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.X86_64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });
    const script = initScript(namesrvAddr, props.liteTopicTtlMinutes, roles);
    initTd.addContainer('mqadmin', {
      image,
      entryPoint: ['sh', '-c'],
      command: [script],
      environment: { JAVA_OPT_EXT: '-Xms256m -Xmx256m' },
      secrets: { ...authSecrets, ...roleSecrets },
      logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: 'init' }),
    });
    // Waits for the task and fails the deploy when mqadmin fails: a stack without its topic and group
    // would deploy green and then refuse every message.
    const init = new RunTaskToCompletion(this, 'CreateTopicAndGroup', {
      cluster: this.cluster,
      taskDefinition: initTd,
      vpc,
      subnets: privateSubnets,
      securityGroup: sg,
      // Any change of the script (topic, group, TTL, auth) runs the task again on update.
      runId: hash(script),
      timeout: Duration.minutes(13),
    });
    init.node.addDependency(this.brokerService, this.proxyService);
    this.initFunctionRole = init.handlerRole;
    this.taskDefinitions.push(
      ...this.node.children.filter((c): c is ecs.FargateTaskDefinition => c instanceof ecs.FargateTaskDefinition),
    );

    new CfnOutput(this, 'ProxyEndpoint', {
      value: this.endpoint,
      description: 'RocketMQ proxy gRPC endpoint (internal)',
    });
    new CfnOutput(this, 'NamesrvAddr', { value: namesrvAddr });
  }

  /**
   * Admits `client` to the internal NLB's gRPC listener (TLS): the only way into the proxies from the VPC.
   * A remote rule: it lives in the client's stack, which already depends on this one (here it would be
   * a dependency cycle).
   */
  allowProxyClient(client: ProxyClient): void {
    this.proxyNlbSecurityGroup.addIngressRule(
      client.securityGroup,
      ec2.Port.tcp(ROCKETMQ.grpcPort),
      `proxy gRPC (TLS) from ${client.description}`,
      true,
    );
  }
}

export interface ProxyClient {
  readonly securityGroup: ec2.ISecurityGroup;
  readonly description: string;
}

/** Short stable hash (FNV-1a) of a string, for physical ids. */
function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}
