/**
 * The resources that matter, asserted on the templates of one in-process synthesis
 * (cdk-nag runs as part of it: synthesis throws on any unacknowledged finding).
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { configFromContext } from '../../infra/config.ts';
import { addSluice } from '../../infra/sluice.ts';
import { ACKNOWLEDGED } from '../../infra/nag.ts';
import { parsePolicy } from '../../lib/policy/schema.js';
import { cdkJsonContext, synthesize, validationReport, type Synthesized } from './helpers.ts';

type Json = Record<string, unknown>;
const resourcesOf = (
  s: Synthesized,
  stack: Parameters<Synthesized['template']>[0],
  type: string,
): Record<string, Json> => s.template(stack).findResources(type) as Record<string, Json>;
const props = (r: Json): Json => r.Properties as Json;
const statements = (s: Synthesized, stack: Parameters<Synthesized['template']>[0], rolePrefix: string): Json[] => {
  const policies = resourcesOf(s, stack, 'AWS::IAM::Policy');
  const out: Json[] = [];
  for (const p of Object.values(policies)) {
    const roles = JSON.stringify(props(p).Roles);
    if (!roles.includes(rolePrefix)) continue;
    out.push(...((props(p).PolicyDocument as Json).Statement as Json[]));
  }
  return out;
};
const asArray = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

let s: Synthesized;
let synthMs = 0;
beforeAll(() => {
  const t0 = performance.now();
  s = synthesize({ stage: 'test', region: 'eu-west-1', account: '111122223333' });
  synthMs = performance.now() - t0;
  console.log(`in-process synth (7 stacks, cdk-nag, esbuild bundle): ${Math.round(synthMs)} ms`);
}, 120_000);
afterAll(() => s?.cleanup());

describe('app', () => {
  it('has one stack per concern, all in the configured region', () => {
    const names = s.assembly.stacks.map((x) => x.stackName).sort();
    expect(names).toEqual(
      ['Broker', 'Config', 'Dispatchers', 'Edge', 'Network', 'Observability', 'Queues']
        .map((n) => `Sluice-test-${n}`)
        .sort(),
    );
    for (const st of s.assembly.stacks) expect(st.environment.region).toBe('eu-west-1');
  });

  it('passes cdk-nag AwsSolutions with zero unacknowledged findings, each acknowledgment reasoned', () => {
    const report = validationReport(s.outdir);
    const nag = report.pluginReports.find((p) => p.pluginName === 'AwsSolutions');
    expect(nag).toBeDefined();
    expect(nag!.violations).toEqual([]);
    expect(nag!.conclusion).toBe('success');
    for (const v of nag!.suppressedViolations ?? []) expect(v.reason.length, v.acknowledgedId).toBeGreaterThan(60);
    for (const a of ACKNOWLEDGED) expect(a.reason.length, `${a.path} ${a.id}`).toBeGreaterThan(60);
    // Every acknowledgment is for a rule id cdk-nag or CloudFormation really uses.
    for (const a of ACKNOWLEDGED)
      expect(a.id).toMatch(
        /^(AwsSolutions::AwsSolutions-[A-Z]+\d+|CloudFormation-Validate::W\d+|Annotation::@aws-cdk\/)/,
      );
  });
});

describe('edge', () => {
  it('is a Node.js 24 arm64 function with a RESPONSE_STREAM function URL', () => {
    const t = s.template('edge');
    t.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
    });
    t.hasResourceProperties('AWS::Lambda::Url', { InvokeMode: 'RESPONSE_STREAM', AuthType: 'NONE' });
    // A public function URL needs both permissions (InvokeFunctionUrl and InvokeFunction via the URL).
    t.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      FunctionUrlAuthType: 'NONE',
      Principal: '*',
    });
    t.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      InvokedViaFunctionUrl: true,
    });
  });

  it('is not attached to the VPC (function URLs do not stream from VPC functions)', () => {
    const fns = resourcesOf(s, 'edge', 'AWS::Lambda::Function');
    const edge = Object.values(fns).find((f) => (props(f).Runtime as string) === 'nodejs24.x')!;
    expect(props(edge).VpcConfig).toBeUndefined();
  });

  it('reads secrets from Secrets Manager at run time: ids in the environment, never values', () => {
    const fns = resourcesOf(s, 'edge', 'AWS::Lambda::Function');
    const edge = Object.values(fns).find((f) => (props(f).Runtime as string) === 'nodejs24.x')!;
    const env = ((props(edge).Environment as Json).Variables ?? {}) as Json;
    expect(env.SLUICE_UPSTASH_SECRET_ID).toBe('sluice/test/upstash');
    const keys = Object.keys(env).join(' ');
    expect(keys).not.toMatch(/TOKEN|PASSWORD|UPSTASH_REDIS_REST_URL/);
    const read = statements(s, 'edge', 'HandlerRole').find((st) =>
      asArray(st.Action as string | string[]).includes('secretsmanager:GetSecretValue'),
    );
    expect(read).toBeDefined();
    expect(JSON.stringify(read!.Resource)).toContain(':secret:sluice/test/upstash-??????');
  });

  it('has IAM grants scoped to its secret, its queue and its stage parameters (no Resource "*")', () => {
    const sts = statements(s, 'edge', 'HandlerRole');
    expect(sts.length).toBeGreaterThan(0);
    for (const st of sts) expect(asArray(st.Resource as unknown)).not.toContain('*');
    const send = sts.find((st) => asArray(st.Action as string | string[]).includes('sqs:SendMessage'));
    expect(JSON.stringify(send!.Resource)).toMatch(/Spillover/);
    const ssm = sts.find((st) => asArray(st.Action as string | string[]).includes('ssm:GetParametersByPath'));
    expect(JSON.stringify(ssm!.Resource)).toContain(':parameter/sluice/test/*');
    expect(JSON.stringify(sts)).not.toMatch(/sqs:\*|ssm:\*|secretsmanager:\*/);
  });

  it('sits behind CloudFront with the function URL as origin, no caching, all methods', () => {
    const t = s.template('edge');
    t.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Origins: [
          Match.objectLike({
            DomainName: {
              'Fn::Select': [
                2,
                { 'Fn::Split': ['/', { 'Fn::GetAtt': [Match.stringLikeRegexp('HandlerFunctionUrl'), 'FunctionUrl'] }] },
              ],
            },
            CustomOriginConfig: Match.objectLike({ OriginProtocolPolicy: 'https-only', OriginReadTimeout: 60 }),
          }),
        ],
        DefaultCacheBehavior: Match.objectLike({
          AllowedMethods: Match.arrayWith(['GET', 'OPTIONS', 'POST']),
          CachePolicyId: '4135ea2d-6df8-44a3-9df3-4b5a84be39ad', // Managed-CachingDisabled
          OriginRequestPolicyId: 'b689b0a8-53d0-40ab-baf2-68738e2966ac', // AllViewerExceptHostHeader
          ViewerProtocolPolicy: 'https-only',
        }),
        Logging: Match.objectLike({ Bucket: Match.anyValue() }),
      }),
    });
  });
});

describe('queues', () => {
  it('encrypts spillover and dead-letter with a rotating customer-managed key', () => {
    const t = s.template('queues');
    t.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    const queues = Object.values(resourcesOf(s, 'queues', 'AWS::SQS::Queue'));
    expect(queues).toHaveLength(3);
    for (const q of queues)
      expect(JSON.stringify(props(q).KmsMasterKeyId)).toMatch(/\{"Fn::GetAtt":\["QueueKey[0-9A-F]+","Arn"\]\}/);
  });

  it('spills into a high-throughput FIFO queue that redrives to its own FIFO dead-letter queue after 5 receives', () => {
    const fifo = {
      FifoQueue: true,
      ContentBasedDeduplication: false,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
    };
    s.template('queues').hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'sluice-test-spillover.fifo',
      ...fifo,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('SpilloverDeadLetter'), 'Arn'] },
        maxReceiveCount: 5,
      },
    });
    s.template('queues').hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'sluice-test-spillover-dead-letter.fifo',
      ...fifo,
    });
  });

  it('refuses non-TLS access', () => {
    s.template('queues').hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

describe('config', () => {
  it('seeds the policy as JSON parameters under /sluice/<stage>/policy/', () => {
    const params = Object.values(resourcesOf(s, 'config', 'AWS::SSM::Parameter')).map((p) => props(p));
    const names = params.map((p) => p.Name as string);
    for (const n of names) expect(n).toMatch(/^\/sluice\/test\/policy\/[a-z]+$/);
    expect(names.sort()).toEqual(
      ['accounts', 'defaults', 'models', 'tenants', 'tiers'].map((k) => `/sluice/test/policy/${k}`),
    );
    // Reassembled, the parameters are a valid policy with the schema's defaults.
    const policy = Object.fromEntries(
      params.map((p) => [(p.Name as string).split('/').pop(), JSON.parse(p.Value as string) as unknown]),
    );
    const parsed = parsePolicy(policy);
    expect([parsed.tiers.realtime?.weight, parsed.tiers.batch?.weight, parsed.tiers.offline?.weight]).toEqual([
      6, 2, 1,
    ]);
    expect([parsed.tiers.realtime?.share, parsed.tiers.batch?.share, parsed.tiers.offline?.share]).toEqual([
      0.6, 0.25, 0.15,
    ]);
    expect(parsed.defaults.accountModel).toMatchObject({ burst: 50, rate: 10 });
    expect(Object.keys(parsed.models)).toEqual(['sim-llm']);
  });
});

describe('dispatchers', () => {
  it('runs the Dockerfile image with a drain window and secrets injected from Secrets Manager', () => {
    const t = s.template('dispatchers');
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({
          StopTimeout: 120,
          Secrets: Match.arrayWith([
            Match.objectLike({
              Name: 'UPSTASH_REDIS_REST_TOKEN',
              ValueFrom: Match.objectLike({ 'Fn::Join': Match.anyValue() }),
            }),
          ]),
          Environment: Match.arrayWith([
            Match.objectLike({ Name: 'SLUICE_ROCKETMQ_GROUP', Value: 'sluice-dispatchers' }),
          ]),
        }),
      ],
    });
    const json = JSON.stringify(t.toJSON());
    expect(json).toContain(':secret:sluice/test/upstash');
    expect(json).toMatch(/:token::/);
    const manifest = JSON.parse(
      readFileSync(path.join(s.outdir, `${s.stacks.dispatchers.stackName}.assets.json`), 'utf8'),
    ) as {
      dockerImages: Record<string, { source: { directory: string; dockerFile: string } }>;
    };
    const images = Object.values(manifest.dockerImages);
    expect(images.map((i) => i.source.dockerFile)).toEqual(['functions/dispatcher/Dockerfile']);
    // The build context is the repository root cut down to what the image needs.
    const context = readdirSync(path.join(s.outdir, images[0]!.source.directory)).sort();
    expect(context).toEqual(expect.arrayContaining(['functions', 'package.json', 'package-lock.json']));
    expect(context).not.toContain('node_modules');
    expect(context).not.toContain('test');
  });

  it('autoscales on CPU (target tracking) and on the reported backlog (step scaling)', () => {
    const t = s.template('dispatchers');
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      MinCapacity: 2,
      MaxCapacity: 20,
      ScalableDimension: 'ecs:service:DesiredCount',
    });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: Match.objectLike({
        TargetValue: 60,
        PredefinedMetricSpecification: { PredefinedMetricType: 'ECSServiceAverageCPUUtilization' },
      }),
    });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', { PolicyType: 'StepScaling' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'Sluice',
      MetricName: 'DispatcherBacklog',
      Dimensions: [{ Name: 'Stage', Value: 'test' }],
    });
  });

  it('grants only its queues, its stage parameters and its secrets', () => {
    const sts = statements(s, 'dispatchers', 'TaskRole');
    for (const st of sts) expect(asArray(st.Resource as unknown)).not.toContain('*');
    const actions = sts.flatMap((st) => asArray(st.Action as string | string[]));
    expect(actions).toEqual(
      expect.arrayContaining(['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:SendMessage', 'ssm:GetParametersByPath']),
    );
    expect(actions.some((a) => a.endsWith(':*'))).toBe(false);
  });
});

describe('broker', () => {
  it('runs two name servers with stable names, one broker on EFS, and proxies', () => {
    const t = s.template('broker');
    const services = Object.values(resourcesOf(s, 'broker', 'AWS::ServiceDiscovery::Service')).map(
      (x) => props(x).Name,
    );
    expect(services.sort()).toEqual(['broker', 'namesrv-a', 'namesrv-b']);
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      Volumes: [Match.objectLike({ EFSVolumeConfiguration: Match.objectLike({ TransitEncryption: 'ENABLED' }) })],
    });
    t.hasResourceProperties('AWS::EFS::FileSystem', { Encrypted: true });
    t.resourceCountIs('AWS::ECS::Service', 4);
    t.hasResourceProperties('AWS::ECS::Service', {
      DesiredCount: 1,
      DeploymentConfiguration: Match.objectLike({ MaximumPercent: 100, MinimumHealthyPercent: 0 }),
      ServiceRegistries: Match.anyValue(),
    });
    t.hasResourceProperties('AWS::ECS::Service', {
      DesiredCount: 2,
      LoadBalancers: [Match.objectLike({ ContainerPort: 8081 })],
    });
    const defs = JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'));
    expect(defs).toContain('enableLmq=true');
    expect(defs).toContain('-pm cluster');
    expect(defs).toContain('HealthCheck');
  });

  it('puts the proxies behind an internal NLB with TCP health checks', () => {
    const t = s.template('broker');
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Type: 'network', Scheme: 'internal' });
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: 8081,
      Protocol: 'TCP',
      TargetType: 'ip',
      HealthCheckProtocol: 'TCP',
    });
  });

  it('proxies take TLS only, with a certificate issued at deploy for the name the dispatchers dial', () => {
    const t = s.template('broker');
    const [proxyTd] = Object.values(t.findResources('AWS::ECS::TaskDefinition')).filter((r) =>
      JSON.stringify(r).includes('mqproxy'),
    );
    const proxy = (props(proxyTd!).ContainerDefinitions as Json[])[0]! as Json;
    const env = Object.fromEntries(
      (proxy.Environment as Array<{ Name: string; Value: string }>).map((e) => [e.Name, e.Value]),
    );
    expect(env.JAVA_OPT_EXT).toContain('-Dtls.server.mode=enforcing');
    const script = (proxy.Command as string[]).join(' ');
    expect(script).toContain('"tlsTestModeEnable": false');
    expect((proxy.Secrets as Array<{ Name: string }>).map((x) => x.Name).sort()).toEqual([
      'RMQ_PASSWORD',
      'RMQ_TLS_CERT',
      'RMQ_TLS_KEY',
      'RMQ_USER',
    ]);
    // The certificate's name is the internal NLB's DNS name, the endpoint the dispatchers get.
    const [cert] = Object.values(t.findResources('Custom::ProxyTlsCertificate'));
    const nlb = Object.keys(
      t.findResources('AWS::ElasticLoadBalancingV2::LoadBalancer', { Properties: { Scheme: 'internal' } }),
    )[0]!;
    expect(props(cert!).DnsName).toEqual({ 'Fn::GetAtt': [nlb, 'DNSName'] });
    // Its handler may write the two secrets and nothing else.
    const sts = statements(s, 'broker', 'ProxyTlsHandlerRole').filter((st) =>
      JSON.stringify(st.Action).includes('secretsmanager'),
    );
    expect(sts.map((st) => st.Action)).toEqual(['secretsmanager:PutSecretValue']);
    expect(asArray(sts[0]!.Resource as unknown[])).toHaveLength(2);
    // The dispatchers connect over TLS and trust only the CA secret.
    const [dTd] = Object.values(resourcesOf(s, 'dispatchers', 'AWS::ECS::TaskDefinition'));
    const d = (props(dTd!).ContainerDefinitions as Json[])[0]! as Json;
    expect(d.Environment).toContainEqual({ Name: 'SLUICE_ROCKETMQ_TLS', Value: 'true' });
    expect(
      JSON.stringify((d.Secrets as Array<{ Name: string }>).find((x) => x.Name === 'SLUICE_ROCKETMQ_CA_CERT')),
    ).toMatch(/:ca::/);
  });

  it('proxy port open to the NLB only, the NLB to the dispatchers only: no CIDR on 8081', () => {
    const rules = [
      ...Object.values(resourcesOf(s, 'broker', 'AWS::EC2::SecurityGroupIngress')),
      ...Object.values(resourcesOf(s, 'dispatchers', 'AWS::EC2::SecurityGroupIngress')),
    ].map(props);
    const on8081 = rules.filter((r) => r.FromPort === 8081);
    expect(on8081.length).toBe(2);
    for (const r of on8081) {
      expect(r.CidrIp).toBeUndefined();
      expect(r.SourceSecurityGroupId).toBeDefined();
    }
    const groups = Object.values(resourcesOf(s, 'broker', 'AWS::EC2::SecurityGroup')).map((g) =>
      JSON.stringify(props(g).SecurityGroupIngress ?? []),
    );
    expect(groups.join('')).not.toContain('8081');
    const nlbSg = Object.keys(resourcesOf(s, 'broker', 'AWS::EC2::SecurityGroup')).find((id) =>
      id.startsWith('ProxyNlbSg'),
    )!;
    const [fromDispatchers] = Object.values(resourcesOf(s, 'dispatchers', 'AWS::EC2::SecurityGroupIngress')).map(props);
    expect(JSON.stringify(fromDispatchers!.GroupId)).toContain(nlbSg);
    expect(JSON.stringify(fromDispatchers!.SourceSecurityGroupId)).toContain('Sg');
  });

  it('creates the LITE parent topic and the wildcard group on deploy with a one-off task it waits for', () => {
    const t = s.template('broker');
    const cr = Object.values(t.findResources('Custom::RunTaskToCompletion')).map((x) => JSON.stringify(props(x)));
    expect(cr).toHaveLength(1);
    expect(cr[0]).toMatch(/inittask/i);
    // The deploy waits for the task and fails when it fails (test/infra/run-task-to-completion.test.ts).
    const fns = JSON.stringify(t.findResources('AWS::Lambda::Function'));
    expect(fns).toContain('DescribeTasksCommand');
    const defs = JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'));
    expect(defs).toContain('updateTopic');
    expect(defs).toContain('-t sluice-requests -a +message.type=LITE');
    expect(defs).toContain('-g sluice-dispatchers');
    expect(defs).toContain('+lite.bind.topic=sluice-requests,+lite.sub.wildcard=true');
    // The handler may start only that task definition and pass only its roles.
    const sts = statements(s, 'broker', 'CreateTopicAndGroupHandlerRole');
    const run = sts.find((st) => asArray(st.Action as string | string[]).includes('ecs:RunTask'))!;
    expect(JSON.stringify(run.Resource)).toMatch(/inittask/i);
  });
});

describe('observability', () => {
  it('alarms on realtime near its limit, DLQs not empty, spillover not draining, broker unhealthy, backlog growing', () => {
    const t = s.template('observability');
    const alarms = Object.keys(t.findResources('AWS::CloudWatch::Alarm'));
    const ids = [
      'RealtimeNearLimit',
      'DeadLetterNotEmpty',
      'SpilloverDeadLetterNotEmpty',
      'SpilloverNotDraining',
      'DispatcherBacklogGrowing',
    ];
    for (const id of [...ids, 'ProxyUnhealthy', 'BrokerNotRunning']) {
      expect(
        alarms.some((a) => a.startsWith(id)),
        id,
      ).toBe(true);
    }
    // The default edge spills every request by design: an alarm on spilling would never clear.
    expect(alarms.some((a) => a.startsWith('SpilloverInUse'))).toBe(false);
    t.resourceCountIs('AWS::CloudWatch::CompositeAlarm', 1);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'RATE(backlog) * 60' })]),
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
    });
    t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    t.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: Match.anyValue() });
  });
});

describe('variants', () => {
  it('with existingBrokerEndpoint: no Broker stack, dispatchers and edge use the endpoint', () => {
    const v = synthesize({ stage: 'ext', existingBrokerEndpoint: 'mq.example.internal:8081' }, { bundle: false });
    expect(v.stacks.broker).toBeUndefined();
    expect(v.assembly.stacks.map((x) => x.stackName)).not.toContain('Sluice-ext-Broker');
    expect(JSON.stringify(v.template('dispatchers').toJSON())).toContain('mq.example.internal:8081');
    expect(validationReport(v.outdir).pluginReports.every((p) => p.violations.length === 0)).toBe(true);
    v.cleanup();
  });

  it('with brokerPublicTls: a TLS 1.3 public listener, ACL credentials for edge and dispatchers', () => {
    const v = synthesize(
      {
        stage: 'tls',
        brokerPublicTls: JSON.stringify({
          certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/abc',
          domainName: 'mq.example.com',
        }),
        existingVpc: JSON.stringify({
          vpcId: 'vpc-0123456789abcdef0',
          vpcCidrBlock: '10.9.0.0/16',
          availabilityZones: ['us-east-1a', 'us-east-1b'],
          privateSubnetIds: ['subnet-0000000000000000a', 'subnet-0000000000000000b'],
          publicSubnetIds: ['subnet-0000000000000000c', 'subnet-0000000000000000d'],
        }),
      },
      { bundle: false },
    );
    const b = v.template('broker');
    b.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { Scheme: 'internet-facing' });
    b.hasResourceProperties('AWS::ElasticLoadBalancingV2::Listener', {
      Protocol: 'TLS',
      SslPolicy: 'ELBSecurityPolicy-TLS13-1-3-2021-06',
    });
    // The proxies refuse plaintext: the public NLB opens TLS to them again.
    b.hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Port: 8081,
      Protocol: 'TLS',
      TargetType: 'ip',
    });
    const open = Object.entries(b.findResources('AWS::EC2::SecurityGroup')).filter(
      ([, g]) => JSON.stringify(g).includes('0.0.0.0/0') && JSON.stringify(g).includes('8081'),
    );
    expect(open.map(([id]) => id.replace(/[0-9A-F]{8}$/, ''))).toEqual(['PublicNlbSg']);
    expect(JSON.stringify(b.findResources('AWS::ECS::TaskDefinition'))).toContain('authenticationEnabled=true');
    const edgeEnv = JSON.stringify(v.template('edge').findResources('AWS::Lambda::Function'));
    expect(edgeEnv).toContain('mq.example.com:8081');
    expect(edgeEnv).toContain('SLUICE_ROCKETMQ_SECRET_ID');
    v.template('network').resourceCountIs('AWS::EC2::VPC', 0);
    expect(validationReport(v.outdir).pluginReports.every((p) => p.violations.length === 0)).toBe(true);
    v.cleanup();
  });

  it('zones: never guessed from the region name; given ones are used as they are', () => {
    const agnostic = synthesize({ stage: 'azs' }, { bundle: false });
    const subnets = Object.values(agnostic.template('network').findResources('AWS::EC2::Subnet')).map((r) =>
      JSON.stringify(r.Properties.AvailabilityZone),
    );
    // Account-agnostic: chosen at deploy time among the account's own zones.
    expect(subnets.every((z) => z.includes('Fn::GetAZs'))).toBe(true);
    agnostic.cleanup();
    const given = synthesize(
      { stage: 'azs2', availabilityZones: JSON.stringify(['us-east-1c', 'us-east-1d']) },
      { bundle: false },
    );
    const zones = Object.values(given.template('network').findResources('AWS::EC2::Subnet')).map(
      (r) => r.Properties.AvailabilityZone as string,
    );
    expect(new Set(zones)).toEqual(new Set(['us-east-1c', 'us-east-1d']));
    given.cleanup();
  });

  it('with edgeOriginAccess=oac: IAM-authenticated function URL signed by a Lambda origin access control', () => {
    const v = synthesize({ stage: 'oac', edgeOriginAccess: 'oac' }, { bundle: false });
    const e = v.template('edge');
    e.hasResourceProperties('AWS::Lambda::Url', { AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    e.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
      OriginAccessControlConfig: Match.objectLike({
        OriginAccessControlOriginType: 'lambda',
        SigningBehavior: 'always',
      }),
    });
    e.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunctionUrl',
      Principal: 'cloudfront.amazonaws.com',
    });
    expect(validationReport(v.outdir).pluginReports.every((p) => p.violations.length === 0)).toBe(true);
    v.cleanup();
  });

  it('a second region is a second instance of the regional stacks, in the same app if wanted', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sluice-2r-'));
    const app = new App({ outdir: dir, context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
    const base = configFromContext((k) => (({ stage: 'prod' }) as Record<string, unknown>)[k]);
    const a = addSluice(
      app,
      { ...base, region: 'eu-west-1', availabilityZones: ['eu-west-1a', 'eu-west-1b'] },
      { regionSuffix: true },
    );
    const b = addSluice(
      app,
      { ...base, region: 'us-west-2', availabilityZones: ['us-west-2a', 'us-west-2b'] },
      { regionSuffix: true },
    );
    const assembly = app.synth();
    expect(assembly.stacks).toHaveLength(14);
    expect(a.edge.stackName).toBe('Sluice-prod-eu-west-1-Edge');
    expect(b.edge.region).toBe('us-west-2');
    // Same parameter path in each region (SSM is regional), own queues per region.
    const paramsA = Template.fromStack(a.config).findResources('AWS::SSM::Parameter');
    const paramsB = Template.fromStack(b.config).findResources('AWS::SSM::Parameter');
    expect(Object.values(paramsA).map((r) => (r.Properties as Json).Name)).toEqual(
      Object.values(paramsB).map((r) => (r.Properties as Json).Name),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses bad context with a clear message', () => {
    expect(() => synthesize({ stage: 'Bad_Stage' }, { bundle: false })).toThrow(/context stage/);
    expect(() => synthesize({ dispatcherDrainSeconds: 600 }, { bundle: false })).toThrow(/dispatcherDrainSeconds/);
    // Shorter than the proxy's long poll: a receive still in flight at exit would strand a message for 60 s.
    expect(() => synthesize({ dispatcherDrainSeconds: 20 }, { bundle: false })).toThrow(
      /dispatcherDrainSeconds: between 30 .*got 20/,
    );
  });
});
