/**
 * The deploy rehearsal: what `cdk deploy` ships, run on this machine from `cdk.out`.
 * Synthesizes the app, then starts the deployed topology with local stand-ins for AWS
 * (ElasticMQ for SQS, moto for SSM and Secrets Manager, the Upstash-compatible REST server
 * over redis-server, RocketMQ 5.5), every name and value read from the templates:
 * the edge asset alone in an empty directory under AWS's runtime interface client, behind a
 * function URL front with CloudFront's origin timeouts; the dispatcher built as its
 * Dockerfile builds it, with the task definition's environment and secrets. Then a smoke
 * test through the front. Each step says what it read and what it stood in for.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { serve } from '@hono/node-server';
import { CreateSecretCommand, GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { GetParameterCommand, PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { createGpuSim } from '../../functions/gpu-sim/app.ts';
import { METRIC_EMITTER, SLUICE_NAMESPACE } from '../../functions/runtime/contract.ts';
import { systemClock } from '../../functions/runtime/system-clock.ts';
import { startElasticMQ } from '../elasticmq/index.ts';
import { startMoto } from '../moto/server.ts';
import { startRedisServer } from '../redis/server.ts';
import { startRocketMQ } from '../rocketmq/index.ts';
import { freePort } from '../rocketmq/ports.ts';
import { startUpstashRestServer } from '../upstash-rest/server.ts';
import { runBrokerInit } from './broker-init.ts';
import { deployedRocketMQConf, expandCredentials } from './broker-conf.ts';
import { buildImage, dockerAsset } from './dockerfile.ts';
import { startFunctionUrl } from './function-url.ts';
import { startTlsListener } from './tls-listener.ts';
import { handshake, plaintextRefused, runCertificateResources } from './proxy-tls.ts';
import { ensureRic, startRicEnvironment } from './lambda-ric.ts';
import { eachLine } from './lines.ts';
import { emfMetrics, sameMetric, watchedMetrics } from './metrics.ts';
import { smoke, type SmokeResult } from './smoke.ts';
import { Assembly, seededGpuPorts, stackSecretName, type LocalWorld, type Template } from './templates.ts';

export interface RehearseOptions {
  readonly repoRoot: string;
  /** Run this edge bundle instead of the one in cdk.out (e.g. an older build, to see it fail). */
  readonly edgeAsset?: string;
  /** Reuse a synthesized assembly instead of running `cdk synth`. */
  readonly cdkOut?: string;
  /**
   * default: the edge spills every request to SQS. brokerPublicTls: the edge sends to RocketMQ
   * itself, over TLS through the public NLB (a local stand-in), as its own ACL user.
   */
  readonly layout?: Layout;
  readonly log: (line: string) => void;
}

export type Layout = 'default' | 'brokerPublicTls';
export const LAYOUTS: readonly Layout[] = ['default', 'brokerPublicTls'];

/** The context a user sets for the TLS layout; the domain stands for a CNAME to the public NLB. */
const PUBLIC_TLS = {
  certificateArn: 'arn:aws:acm:us-east-1:000000000000:certificate/rehearsal',
  domainName: 'mq.rehearsal.test',
};

export interface RehearseReport {
  readonly ok: boolean;
  readonly checks: Array<{ name: string; ok: boolean; detail: string }>;
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';
/** The internal NLB's DNS name stands for this: the proxies' certificate is issued for it, and it is loopback. */
const PROXY_NLB_HOST = 'localhost';
const SLOW_MODEL = 'sim-llm-slow';
/** Two tokens of this: an answer that comes after CloudFront's 60 s origin read timeout. */
const SLOW_TOKEN_MS = 33_000;
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'rehearsal', AWS_SECRET_ACCESS_KEY: 'rehearsal' };

export async function rehearse(options: RehearseOptions): Promise<RehearseReport> {
  const { log, repoRoot } = options;
  const cache = join(repoRoot, '.cache');
  const checks: RehearseReport['checks'] = [];
  const check = (name: string, ok: boolean, detail: string) => {
    checks.push({ name, ok, detail });
    log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
  };
  const stops: Array<() => Promise<unknown>> = [];
  const work = mkdtempSync(join(tmpdir(), 'sluice-rehearsal-'));
  stops.push(async () => rmSync(work, { recursive: true, force: true }));
  try {
    // --- the GPU endpoint first: its address goes into the synthesized policy (context gpuEndpoints).
    // A reused cdk.out was synthesized with its own: the GPUs listen where its policy says.
    const seeded = options.cdkOut ? seededGpuPorts(new Assembly(options.cdkOut)) : {};
    if (options.cdkOut) log(`GPU ports from ${options.cdkOut}'s seeded policy: ${JSON.stringify(seeded)}`);
    const gpuPort = seeded['sim-llm'] ?? (await freePort());
    const gpu = createGpuSim({ clock: systemClock, models: ['sim-llm'], slots: 8, baseTokenMs: 15 });
    let gpuMetricsReads = 0;
    const gpuServer = serve({
      fetch: (req) => {
        if (new URL(req.url).pathname === '/metrics') gpuMetricsReads++;
        return gpu.app.fetch(req);
      },
      hostname: '127.0.0.1',
      port: gpuPort,
    });
    stops.push(async () => {
      gpu.close();
      await new Promise((r) => gpuServer.close(r));
    });
    // A second model whose GPU takes longer than CloudFront's origin read timeout to answer.
    const slowPort = seeded[SLOW_MODEL] ?? (await freePort());
    const slowGpu = createGpuSim({
      clock: systemClock,
      models: [SLOW_MODEL],
      slots: 2,
      baseTokenMs: SLOW_TOKEN_MS,
      minOutputTokens: 2,
      maxOutputTokens: 2,
    });
    const slowServer = serve({ fetch: slowGpu.app.fetch, hostname: '127.0.0.1', port: slowPort });
    stops.push(async () => {
      slowGpu.close();
      await new Promise((r) => slowServer.close(r));
    });
    const gpuEndpoints = {
      'sim-llm': [`http://127.0.0.1:${gpuPort}/v1`],
      [SLOW_MODEL]: [`http://127.0.0.1:${slowPort}/v1`],
    };

    // --- synthesize (as `cdk deploy` would first), offline.
    const out = options.cdkOut ?? join(work, 'cdk.out');
    if (!options.cdkOut) {
      log(`cdk synth -> ${out}`);
      const layoutContext =
        options.layout === 'brokerPublicTls' ? ['-c', `brokerPublicTls=${JSON.stringify(PUBLIC_TLS)}`] : [];
      const r = spawnSync(
        'npx',
        [
          'cdk',
          'synth',
          '--quiet',
          '--no-notices',
          '--ci',
          '-o',
          out,
          '-c',
          `gpuEndpoints=${JSON.stringify(gpuEndpoints)}`,
          ...layoutContext,
        ],
        {
          cwd: repoRoot,
          env: offlineEnv(),
          encoding: 'utf8',
          timeout: 300_000,
        },
      );
      if (r.status !== 0) throw new Error(`cdk synth failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
    }
    const app = new Assembly(out);
    const edgeStack = app.stack('Edge');
    const dispatchersStack = app.stack('Dispatchers');
    const configStack = app.stack('Config');
    const queuesStack = app.stack('Queues');
    const [, fn] = one(
      app
        .resources(edgeStack, 'AWS::Lambda::Function')
        .filter(([, r]) => String(r.Properties.Description ?? '').includes(' edge ')),
      'edge function',
    );
    const edgeVariables =
      (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};

    // Secrets the stacks create, generated as their templates say: RocketMQ needs its users' before it starts.
    const generated = new Map<string, string>();
    const unnamed: string[] = [];
    for (const t of app.templates.values()) {
      for (const [id, r] of app.resources(t, 'AWS::SecretsManager::Secret')) {
        const gen = r.Properties.GenerateSecretString as
          { SecretStringTemplate?: string; GenerateStringKey?: string } | undefined;
        // An unnamed secret is reported below and stood in for by its logical id, so the rest still runs.
        const { name, named } = stackSecretName(id, r);
        if (!named) unnamed.push(`${t.stack}/${id}`);
        generated.set(
          name,
          gen?.GenerateStringKey
            ? JSON.stringify({
                ...JSON.parse(gen.SecretStringTemplate ?? '{}'),
                [gen.GenerateStringKey]: randomBytes(24).toString('hex'),
              })
            : randomBytes(24).toString('hex'),
        );
        log(`secret ${name} (${t.stack}/${id}) generated as the template says`);
      }
    }
    check(
      'every secret the stacks create has a name operators can find it by',
      unnamed.length === 0,
      unnamed.length
        ? `unnamed (AWS generates a name; here the logical id stands in): ${unnamed.join(', ')}`
        : `${generated.size} secret(s), all named`,
    );
    const [, td] = one(app.resources(dispatchersStack, 'AWS::ECS::TaskDefinition'), 'dispatcher task definition');
    const container = ((td.Properties.ContainerDefinitions as Array<Record<string, unknown>>) ?? [])[0]!;
    const generatedField = (valueFrom: string) =>
      secretReference(valueFrom, (name) => must(generated.get(name), `secret ${name} is not in the templates`));

    // The broker.conf and proxy settings the Broker stack deploys, with its super user's credentials.
    const deployed = deployedRocketMQConf(app);
    const adminRef =
      deployed.credentialsSecret === undefined
        ? undefined
        : app.resolve(app.stack('Broker'), deployed.credentialsSecret, world0());
    check(
      'the broker requires ACL credentials inside the VPC',
      adminRef !== undefined,
      adminRef
        ? `RMQ_USER/RMQ_PASSWORD from ${secretName(adminRef)}`
        : 'the broker container has no RMQ_USER secret: RocketMQ runs without ACL here, as it would deployed',
    );
    // Without ACL the conf names no $RMQ_USER/$RMQ_PASSWORD: expanding with nothing leaves it as deployed.
    const admin = adminRef
      ? (JSON.parse(must(generated.get(secretName(adminRef)), `secret ${adminRef} is not in the templates`)) as {
          username: string;
          password: string;
        })
      : { username: '', password: '' };
    log(`RocketMQ runs the Broker stack's broker.conf: ${Object.keys(deployed.broker).join(', ')}`);

    // --- local stand-ins for AWS, started side by side; RocketMQ once its proxies' certificate is issued.
    log('starting redis-server + Upstash REST, moto, ElasticMQ');
    const upstashToken = createHash('sha256').update(work).digest('hex');
    const [redis, moto, elasticmq] = await Promise.all([
      startRedisServer({ log: (m) => log(`[redis] ${m}`) }),
      startMoto((m) => log(`[moto] ${m}`)),
      startElasticMQ({ cacheDir: cache, log: (m) => log(`[elasticmq] ${m}`) }),
    ]);
    stops.push(
      () => redis.close(),
      () => moto.close(),
      () => elasticmq.stop(),
    );
    const endpoints = {
      AWS_ENDPOINT_URL_SSM: moto.url,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: moto.url,
      AWS_ENDPOINT_URL_SQS: elasticmq.endpoint,
    };
    const aws = { region: REGION, credentials: { accessKeyId: 'rehearsal', secretAccessKey: 'rehearsal' } };
    const sqs = new SQSClient({ ...aws, endpoint: elasticmq.endpoint });
    const ssm = new SSMClient({ ...aws, endpoint: moto.url });
    const secrets = new SecretsManagerClient({ ...aws, endpoint: moto.url });

    // Secrets the stacks create (generated above), then the proxies' certificate issued into two of them
    // by the Broker stack's custom resource, as on deploy; the proxy tasks start after it.
    for (const [name, value] of generated)
      await secrets.send(new CreateSecretCommand({ Name: name, SecretString: value }));
    const brokerStack = app.stack('Broker');
    const issued = await runCertificateResources({
      app,
      t: brokerStack,
      world: world0(),
      dir: work,
      repoRoot,
      env: { ...baseEnv(), ...CREDENTIALS, AWS_REGION: REGION, AWS_ENDPOINT_URL_SECRETS_MANAGER: moto.url },
      log,
    });
    for (const c of issued)
      check(`proxy TLS certificate issued by the Broker stack's custom resource (${c.id})`, c.ok, c.detail);
    const proxyEnv: Record<string, string> = {};
    for (const [name, ref] of Object.entries(deployed.proxySecrets))
      proxyEnv[name] = await secretValue(secrets, app.resolve(brokerStack, ref, world0()));
    const proxySettings: Record<string, unknown> = expandCredentials(deployed.proxy, admin.username, admin.password);
    // The files the proxy's start script writes from its secrets: same contents, local paths.
    for (const [key, envName, file] of [
      ['tlsCertPath', 'RMQ_TLS_CERT', 'proxy.crt'],
      ['tlsKeyPath', 'RMQ_TLS_KEY', 'proxy.key'],
    ] as const) {
      if (proxySettings[key] === undefined) continue;
      const local = join(work, file);
      writeFileSync(local, `${must(proxyEnv[envName], `the proxy reads ${key} but has no secret ${envName}`)}\n`, {
        mode: 0o600,
      });
      proxySettings[key] = local;
    }
    log(
      `RocketMQ proxy settings ${Object.keys(proxySettings).join(', ')}; JVM ${deployed.proxySystemProperties.join(' ') || '(no system properties)'}`,
    );
    const rocketmq = await startRocketMQ({
      cacheDir: cache,
      // No topic or group of its own: the stack's init script below creates them, and its users.
      createTopicAndGroup: false,
      config: { brokerSettings: expandCredentials(deployed.broker, admin.username, admin.password), proxySettings },
      proxySystemProperties: deployed.proxySystemProperties,
      log: (m) => log(`[rocketmq] ${m}`),
    });
    stops.push(() => rocketmq.stop());
    const init = await runBrokerInit({
      app,
      cacheDir: cache,
      namesrv: rocketmq.namesrv,
      log,
      secret: (valueFrom) => generatedField(app.resolve(app.stack('Broker'), valueFrom, world0())),
    });
    check("broker init task (the Broker stack's mqadmin script) creates the topic and group", init.ok, init.detail);
    if (!init.ok) {
      // The deploy would stop here; the topic and group the dispatchers name, made the tests' way
      // (unauthenticated admin calls: a broker with ACL refuses them), let the rest be rehearsed.
      const topic = literalEnv(container, 'SLUICE_ROCKETMQ_TOPIC') ?? rocketmq.parentTopic;
      const group = literalEnv(container, 'SLUICE_ROCKETMQ_GROUP') ?? rocketmq.consumerGroup;
      log(
        `broker init failed: creating LITE topic ${topic} and wildcard group ${group} the tests' way, to rehearse the rest`,
      );
      await rocketmq.createLiteTopic(topic);
      await rocketmq.createWildcardGroup(group, topic);
    }
    const upstash = await startUpstashRestServer({ redisUrl: redis.url, token: upstashToken });
    stops.push(() => upstash.close());

    // --- queues with the template's attributes (dead-letter targets first).
    const queueUrls = new Map<string, string>();
    const queueArns = new Map<string, string>();
    const world: LocalWorld = {
      region: REGION,
      account: ACCOUNT,
      queueUrl: (name) => must(queueUrls.get(name), `queue ${name} was not created`),
      queueArn: (name) => must(queueArns.get(name), `queue ${name} was not created`),
      loadBalancerHost: () => PROXY_NLB_HOST,
    };
    const queues = app
      .resources(queuesStack, 'AWS::SQS::Queue')
      .sort(([, a], [, b]) => Number('RedrivePolicy' in a.Properties) - Number('RedrivePolicy' in b.Properties));
    for (const [, q] of queues) {
      const name = app.resolve(queuesStack, q.Properties.QueueName, world);
      const { attributes, skipped } = queueAttributes(app, queuesStack, q.Properties, world);
      const created = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      queueUrls.set(name, created.QueueUrl!);
      const arn = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: created.QueueUrl!, AttributeNames: ['QueueArn'] }),
      );
      queueArns.set(name, arn.Attributes!.QueueArn!);
      log(`queue ${name}: ${JSON.stringify(attributes)} (not stood in for: ${skipped.join(', ') || 'nothing'})`);
    }

    // --- the spillover as the edge sends to it, before anything consumes it (a probe, removed again).
    const spillover = edgeVariables.SLUICE_SPILLOVER_QUEUE_URL;
    const probe =
      spillover === undefined
        ? { ok: false, detail: 'the edge names no SLUICE_SPILLOVER_QUEUE_URL' }
        : await spilloverProbe(sqs, app.resolve(edgeStack, spillover, world));
    check(
      "spillover queue takes the edge's send (FIFO: MessageGroupId, MessageDeduplicationId)",
      probe.ok,
      probe.detail,
    );

    // --- the policy parameters the Config stack seeds, and the secret the README has the user create.
    for (const [, p] of app.resources(configStack, 'AWS::SSM::Parameter')) {
      const name = app.resolve(configStack, p.Properties.Name, world);
      await ssm.send(
        new PutParameterCommand({
          Name: name,
          Value: app.resolve(configStack, p.Properties.Value, world),
          Type: 'String',
          Overwrite: true,
        }),
      );
      log(`ssm ${name} seeded from the template`);
    }
    // The one secret the README has the user create (the stacks' own are in moto above).
    const upstashSecretName = app.resolve(configStack, app.output(configStack, 'UpstashSecretName'), world);
    await secrets.send(
      new CreateSecretCommand({
        Name: upstashSecretName,
        SecretString: JSON.stringify({ url: upstash.url, token: upstashToken }),
      }),
    );
    log(`secret ${upstashSecretName} created as infra/README.md says (url, token)`);

    // --- the dispatcher: built as its Dockerfile builds it, run with the task definition's environment and secrets.
    const asset = dockerAsset(out, dispatchersStack.stack);
    // The build context is the asset directory `cdk deploy` hands to `docker build`: the synthesized app's own sources.
    const image = buildImage({
      dockerfile: join(asset.context, asset.dockerFile),
      context: asset.context,
      modules: repoRoot,
      into: join(cache, 'rehearsal-image'),
      log,
    });
    for (const s of image.steps) log(`[image] ${s}`);
    const taskEnv: Record<string, string> = {};
    for (const e of (container.Environment ?? []) as Array<{ Name: string; Value: unknown }>)
      taskEnv[e.Name] = app.resolve(dispatchersStack, e.Value, world);
    for (const s of (container.Secrets ?? []) as Array<{ Name: string; ValueFrom: unknown }>) {
      taskEnv[s.Name] = await secretValue(secrets, app.resolve(dispatchersStack, s.ValueFrom, world));
    }
    standInForProxy(taskEnv, rocketmq.endpoints);
    // A path of the container's own /tmp: here, one of the rehearsal's.
    if (taskEnv.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH)
      taskEnv.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH = join(work, 'grpc-roots.pem');
    const metricsPort = await freePort();
    const dispatcherLines: string[] = [];
    const dispatcher = startProcess(
      image.cmd,
      image.workdir,
      {
        ...baseEnv(),
        ...image.env,
        ...taskEnv,
        ...CREDENTIALS,
        AWS_REGION: REGION,
        ...endpoints,
        // Local choices, not the template's: a free port for /metrics; EMF every 2 s, not every minute.
        SLUICE_METRICS_PORT: String(metricsPort),
        SLUICE_EMF_INTERVAL_MS: '2000',
      },
      (line) => {
        dispatcherLines.push(line);
        if (!line.startsWith('{"_aws"')) log(`[dispatcher] ${line.slice(0, 300)}`);
      },
    );
    stops.push(() => dispatcher.stop());
    log(`dispatcher: ${image.cmd.join(' ')} in ${image.workdir} with ${Object.keys(taskEnv).sort().join(', ')}`);

    // --- what the dispatchers dial inside the VPC speaks TLS only, with the certificate they trust.
    const dialed = must(taskEnv.SLUICE_ROCKETMQ_ENDPOINTS, 'the dispatchers have no SLUICE_ROCKETMQ_ENDPOINTS');
    const [dialedHost, dialedPort] = dialed.split(':') as [string, string];
    check(
      'dispatchers connect to the proxies over TLS trusting only the deploy-time CA',
      taskEnv.SLUICE_ROCKETMQ_TLS === 'true' && Boolean(taskEnv.SLUICE_ROCKETMQ_CA_CERT),
      `SLUICE_ROCKETMQ_TLS=${taskEnv.SLUICE_ROCKETMQ_TLS ?? '(unset)'}, SLUICE_ROCKETMQ_CA_CERT ${taskEnv.SLUICE_ROCKETMQ_CA_CERT ? 'from its ECS secret' : '(unset)'}`,
    );
    if (taskEnv.SLUICE_ROCKETMQ_CA_CERT) {
      const h = await handshake(dialedHost, Number(dialedPort), dialedHost, taskEnv.SLUICE_ROCKETMQ_CA_CERT);
      check(`proxy presents a certificate for ${dialedHost} that verifies against the CA secret`, h.ok, h.detail);
    }
    // With the dispatchers' user when they have one; without, a plaintext client with no user at all.
    const user =
      taskEnv.SLUICE_ROCKETMQ_ACCESS_KEY && taskEnv.SLUICE_ROCKETMQ_SECRET_KEY
        ? { accessKey: taskEnv.SLUICE_ROCKETMQ_ACCESS_KEY, accessSecret: taskEnv.SLUICE_ROCKETMQ_SECRET_KEY }
        : undefined;
    const refused = await plaintextRefused(dialed, must(taskEnv.SLUICE_ROCKETMQ_TOPIC, 'no topic'), user);
    check(
      `proxy refuses a plaintext gRPC client (${user ? 'valid user' : 'no user: the dispatchers have none'}, no TLS)`,
      refused.ok,
      refused.detail,
    );

    // --- the edge: its asset alone in an empty task root, under aws-lambda-ric, behind the function URL front.
    const assetFile =
      options.edgeAsset ??
      join(out, `asset.${String((fn.Properties.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '')}`, 'index.mjs');
    const taskRoot = join(work, 'var-task');
    mkdirSync(taskRoot);
    if (options.edgeAsset) copyFileSync(assetFile, join(taskRoot, 'index.mjs'));
    // The asset directory is what the function's zip holds (index.mjs, its source map, package.json).
    else cpSync(dirname(assetFile), taskRoot, { recursive: true });
    log(
      `edge asset ${options.edgeAsset ? assetFile : dirname(assetFile)} copied alone into ${taskRoot}: ${readdirSync(taskRoot).join(', ')}`,
    );
    const fnEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(edgeVariables)) fnEnv[k] = app.resolve(edgeStack, v, world);
    standInForProxy(fnEnv, rocketmq.endpoints);
    // The public NLB's TLS listener: its domain stands for a local TLS terminator in front of the proxy.
    const tlsEnv: Record<string, string> = {};
    if (fnEnv.SLUICE_ROCKETMQ_ENDPOINTS?.startsWith(`${PUBLIC_TLS.domainName}:`)) {
      const [host, port] = rocketmq.endpoints.split(':');
      const nlb = await startTlsListener({
        dir: work,
        target: { host: host!, port: Number(port), tls: publicTargetProtocol(app) === 'TLS' },
      });
      stops.push(() => nlb.close());
      fnEnv.SLUICE_ROCKETMQ_ENDPOINTS = nlb.endpoint;
      // The ACM certificate's chain is in every trust store; the local one is trusted here.
      tlsEnv.NODE_EXTRA_CA_CERTS = nlb.caFile;
      log(`public NLB TLS listener (TLS 1.3) stood in by ${nlb.endpoint} -> proxy ${rocketmq.endpoints}`);
    }
    const runtime = String(fn.Properties.Runtime);
    const [, dist] = one(app.resources(edgeStack, 'AWS::CloudFront::Distribution'), 'distribution');
    const origin = (
      dist.Properties.DistributionConfig as {
        Origins: Array<{
          CustomOriginConfig: { OriginReadTimeout: number };
          OriginCustomHeaders?: Array<{ HeaderName: string; HeaderValue: unknown }>;
        }>;
      }
    ).Origins[0]!;
    const originHeaders: Record<string, string> = {};
    for (const h of origin.OriginCustomHeaders ?? []) {
      originHeaders[h.HeaderName] = await dynamicReferences(secrets, app.resolve(edgeStack, h.HeaderValue, world));
    }
    const ric = ensureRic(cache, log);
    const edgeLines: string[] = [];
    const functionName = 'sluice-rehearsal-edge';
    const front = await startFunctionUrl({
      maxEnvironments: 4,
      functionTimeoutSeconds: Number(fn.Properties.Timeout ?? 3),
      originReadTimeoutSeconds: origin.CustomOriginConfig.OriginReadTimeout,
      originHeaders,
      functionArn: `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionName}`,
      log,
      startEnvironment: (runtimeApi, index) =>
        startRicEnvironment({
          ric,
          taskRoot,
          handler: String(fn.Properties.Handler),
          runtimeApi,
          index,
          env: {
            ...fnEnv,
            ...tlsEnv,
            ...CREDENTIALS,
            ...endpoints,
            PATH: process.env.PATH ?? '/usr/bin:/bin',
            TZ: ':UTC',
            LANG: 'en_US.UTF-8',
            AWS_REGION: REGION,
            AWS_DEFAULT_REGION: REGION,
            AWS_EXECUTION_ENV: `AWS_Lambda_${runtime}`,
            AWS_LAMBDA_FUNCTION_NAME: functionName,
            AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
            AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.Properties.MemorySize ?? 128),
            AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${functionName}`,
            AWS_LAMBDA_LOG_STREAM_NAME: `rehearsal/${index}`,
            AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
          },
          onLine: (line, i) => {
            edgeLines.push(line);
            if (!line.startsWith('{"_aws"')) log(`[edge ${i}] ${line.slice(0, 300)}`);
          },
        }),
    });
    stops.push(() => front.close());
    log(
      `edge: ${runtime} handler ${String(fn.Properties.Handler)}, environment ${Object.keys(fnEnv).sort().join(', ')}; CloudFront origin read timeout ${origin.CustomOriginConfig.OriginReadTimeout} s`,
    );

    // --- smoke through the front.
    const policyPath = must(fnEnv.SLUICE_POLICY_SSM_PATH, 'the edge has no SLUICE_POLICY_SSM_PATH');
    // No admin secret: the smoke's admin API check fails and says so; the rest still runs.
    const adminSecretId = fnEnv.SLUICE_ADMIN_SECRET_ID;
    const adminSecret = adminSecretId
      ? await secrets.send(new GetSecretValueCommand({ SecretId: adminSecretId }))
      : undefined;
    const result: SmokeResult = await smoke({
      adminKey: adminSecret && (JSON.parse(adminSecret.SecretString!) as { key: string }).key,
      baseUrl: front.url,
      functionUrl: front.functionUrl,
      model: 'sim-llm',
      slowModel: SLOW_MODEL,
      originReadTimeoutSeconds: origin.CustomOriginConfig.OriginReadTimeout,
      log,
      putParameter: async (name, value) =>
        void (await ssm.send(
          new PutParameterCommand({ Name: `${policyPath}/${name}`, Value: value, Type: 'String', Overwrite: true }),
        )),
      getParameter: async (name) =>
        (await ssm.send(new GetParameterCommand({ Name: `${policyPath}/${name}` }))).Parameter!.Value!,
      refreshMs: 30_000,
      metricsReads: () => gpuMetricsReads,
      policiesApplied: () => dispatcherLines.filter((l) => l.includes('"msg":"policy applied"')).length,
    });
    for (const c of result.checks) check(c.name, c.ok, c.detail);
    check(
      'edge started',
      front.initErrors.length === 0,
      front.initErrors.length
        ? front.initErrors.join('; ').slice(0, 500)
        : `${front.environments()} execution environment(s), no init error`,
    );

    // --- what CloudWatch would see: every metric an alarm or scaling policy reads, from the process it watches.
    await new Promise((r) => setTimeout(r, 4_000));
    const emitted = { edge: emfMetrics(edgeLines), dispatcher: emfMetrics(dispatcherLines) };
    for (const w of watchedMetrics(app.templates.values(), SLUICE_NAMESPACE)) {
      const who = METRIC_EMITTER[w.name as keyof typeof METRIC_EMITTER];
      const found = who ? emitted[who].some((e) => sameMetric(e, w)) : false;
      check(
        `metric ${w.name} ${JSON.stringify(w.dims)} (${w.alarm})`,
        found,
        found ? `emitted by the ${who} as EMF` : `not in the ${who ?? 'unknown'} process's EMF`,
      );
    }
  } catch (err) {
    check('rehearsal ran', false, err instanceof Error ? (err.stack ?? err.message) : String(err));
  } finally {
    for (const stop of stops.reverse()) await stop().catch((e: unknown) => log(`stop: ${String(e)}`));
  }
  return { ok: checks.length > 0 && checks.every((c) => c.ok), checks };
}

function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AWS_') && !k.startsWith('CDK_')) env[k] = v;
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    CDK_DISABLE_VERSION_CHECK: '1',
  };
}

function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' };
}

/** The proxy NLB's port stands for the local proxy's; its name (PROXY_NLB_HOST) is kept, the certificate is for it. */
function standInForProxy(env: Record<string, string>, proxy: string) {
  const v = env.SLUICE_ROCKETMQ_ENDPOINTS;
  if (v?.startsWith(`${PROXY_NLB_HOST}:`)) env.SLUICE_ROCKETMQ_ENDPOINTS = `${PROXY_NLB_HOST}:${proxy.split(':')[1]}`;
}

function queueAttributes(app: Assembly, t: Template, p: Record<string, unknown>, world: LocalWorld) {
  const copied = [
    'FifoQueue',
    'ContentBasedDeduplication',
    'DeduplicationScope',
    'FifoThroughputLimit',
    'MessageRetentionPeriod',
    'VisibilityTimeout',
    'ReceiveMessageWaitTimeSeconds',
    'DelaySeconds',
    'MaximumMessageSize',
  ];
  const attributes: Record<string, string> = {};
  const skipped: string[] = [];
  for (const [k, v] of Object.entries(p)) {
    if (copied.includes(k)) attributes[k] = String(v);
    else if (k === 'RedrivePolicy') {
      const r = v as { deadLetterTargetArn: unknown; maxReceiveCount: number };
      attributes.RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: app.resolve(t, r.deadLetterTargetArn, world),
        maxReceiveCount: r.maxReceiveCount,
      });
    } else if (k !== 'QueueName' && k !== 'Tags') skipped.push(k);
  }
  return { attributes, skipped };
}

/**
 * The edge's spillover send (lib/queue/sqs/spillover.ts) sets MessageGroupId and MessageDeduplicationId:
 * the queue must be FIFO and take them. The probe message is received and deleted again.
 */
async function spilloverProbe(sqs: SQSClient, url: string): Promise<{ ok: boolean; detail: string }> {
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['FifoQueue'] }));
  const kind = attrs.Attributes?.FifoQueue === 'true' ? 'FIFO' : 'standard';
  try {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'rehearsal probe',
        MessageGroupId: 'rehearsal',
        MessageDeduplicationId: randomBytes(8).toString('hex'),
      }),
    );
  } catch (err) {
    return {
      ok: false,
      detail: `${kind} queue ${url} refuses the edge's send: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  for (let i = 0; i < 5; i++) {
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const mine = (got.Messages ?? []).filter((m) => m.Body === 'rehearsal probe');
    for (const m of mine) await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
    if (mine.length) break;
  }
  return kind === 'FIFO'
    ? { ok: true, detail: `FIFO queue ${url} takes MessageGroupId and MessageDeduplicationId` }
    : {
        ok: false,
        detail: `standard queue ${url}: it took the send, but keeps no order per LiteTopic and drops no duplicates`,
      };
}

/** CloudFormation dynamic references to Secrets Manager, `{{resolve:secretsmanager:<id>:SecretString:<field>::}}`. */
async function dynamicReferences(client: SecretsManagerClient, value: string): Promise<string> {
  let out = value;
  for (const m of value.matchAll(/\{\{resolve:secretsmanager:([^:}]+):SecretString:([^:}]*):[^:}]*:[^:}]*\}\}/g)) {
    const secret = await client.send(new GetSecretValueCommand({ SecretId: m[1] }));
    const v = m[2] ? (JSON.parse(secret.SecretString!) as Record<string, string>)[m[2]] : secret.SecretString;
    if (typeof v !== 'string') throw new Error(`dynamic reference ${m[0]}: no such field`);
    out = out.replace(m[0], v);
  }
  if (out.includes('{{resolve:')) throw new Error(`unresolved dynamic reference in ${value}`);
  return out;
}

/** An ECS secret reference, `arn:...:secret:<name>:<json field>::`, read from the stand-in. */
async function secretValue(client: SecretsManagerClient, valueFrom: string): Promise<string> {
  const secret = await client.send(new GetSecretValueCommand({ SecretId: secretName(valueFrom) }));
  return secretReference(valueFrom, () => secret.SecretString!);
}

const ECS_SECRET_REF = /:secret:(.+?):([^:]*):([^:]*):([^:]*)$/;

function secretName(valueFrom: string): string {
  const m = ECS_SECRET_REF.exec(valueFrom);
  if (!m) throw new Error(`unexpected ECS secret reference ${valueFrom}`);
  return m[1]!;
}

/** The value an ECS secret reference names: the whole secret, or one JSON field of it. */
function secretReference(valueFrom: string, read: (name: string) => string): string {
  const m = ECS_SECRET_REF.exec(valueFrom);
  if (!m) throw new Error(`unexpected ECS secret reference ${valueFrom}`);
  const whole = read(m[1]!);
  if (!m[2]) return whole;
  const value = (JSON.parse(whole) as Record<string, unknown>)[m[2]];
  if (typeof value !== 'string') throw new Error(`secret ${m[1]} has no field ${m[2]}`);
  return value;
}

/** Resolving secret references needs only region and account. */
function world0(): LocalWorld {
  const none = (what: string) => () => {
    throw new Error(`${what} is not known yet`);
  };
  return {
    region: REGION,
    account: ACCOUNT,
    queueUrl: none('queue url'),
    queueArn: none('queue arn'),
    loadBalancerHost: () => PROXY_NLB_HOST,
  };
}

/** A container's environment value when it is a literal in the template. */
function literalEnv(container: Record<string, unknown>, name: string): string | undefined {
  const v = ((container.Environment ?? []) as Array<{ Name: string; Value: unknown }>).find(
    (e) => e.Name === name,
  )?.Value;
  return typeof v === 'string' ? v : undefined;
}

function startProcess(cmd: string[], cwd: string, env: Record<string, string>, onLine: (line: string) => void) {
  const [bin, ...args] = cmd;
  const child: ChildProcess = spawn(bin === 'node' ? process.execPath : bin!, args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const s of [child.stdout!, child.stderr!]) eachLine(s, onLine);
  return {
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null || child.signalCode !== null) return done();
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(kill);
          done();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** The protocol of the public NLB's target group (the one whose listener is TLS). */
function publicTargetProtocol(app: Assembly): string {
  const broker = app.stack('Broker');
  const tlsListener = one(
    app.resources(broker, 'AWS::ElasticLoadBalancingV2::Listener').filter(([, l]) => l.Properties.Protocol === 'TLS'),
    'TLS listener',
  );
  const action = (tlsListener[1].Properties.DefaultActions as Array<{ TargetGroupArn: { Ref: string } }>)[0]!;
  return String(broker.Resources[action.TargetGroupArn.Ref]!.Properties.Protocol);
}

function one<T>(list: T[], what: string): T {
  if (list.length !== 1) throw new Error(`expected one ${what} in the templates, found ${list.length}`);
  return list[0]!;
}

function must<T>(v: T | undefined, message: string): T {
  if (v === undefined) throw new Error(message);
  return v;
}

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
