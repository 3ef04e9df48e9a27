import { createRequire } from 'node:module';
import { Stack, type StackProps, Duration, RemovalPolicy, CfnOutput, SecretValue } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { ROCKETMQ } from '../config.ts';
import { ORIGIN_VERIFY_HEADER, runtimeEnv, SECRET_FIELDS } from '../../functions/runtime/contract.ts';
import { ConfigStack } from './config-stack.ts';
import { edgeMaxSyncWaitMs } from '../seed-policy.ts';

export interface EdgeStackProps extends StackProps {
  readonly stage: string;
  /** Entry file of the Lambda handler (exports `handler`). */
  readonly entry: string;
  /** package-lock.json of the project (esbuild bundling root). */
  readonly lockFile: string;
  readonly parameterPath: string;
  readonly upstashSecret: secretsmanager.ISecret;
  readonly spillover: sqs.IQueue;
  /** Broker endpoint reachable from outside the VPC (TLS), if any; otherwise every request spills to SQS. */
  readonly brokerEndpoint?: string;
  readonly brokerCredentials?: secretsmanager.ISecret;
  readonly nodeMajor: 20 | 22 | 24;
  readonly domainName?: string;
  readonly certificateArn?: string;
  readonly webAclArn?: string;
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  readonly reservedConcurrency?: number;
  readonly originAccess: 'public' | 'oac';
  readonly originReadTimeoutSeconds: number;
}

/** esbuild options shared by CDK bundling and the bundle test. */
export const EDGE_BUNDLING = {
  format: 'esm',
  platform: 'node',
  mainFields: ['module', 'main'],
  /**
   * CommonJS inside the ESM bundle wants `require` and `__dirname`. rocketmq-client-nodejs reads
   * `join(__dirname, '../../package.json')` when it loads (its user agent); `__dirname` is two
   * levels under the task root, where the asset ships that file (`assetPackageJson`).
   */
  banner:
    "import { createRequire as __sluiceCreateRequire } from 'node:module'; import { dirname as __sluiceDirname, join as __sluiceJoin } from 'node:path'; import { fileURLToPath as __sluiceFileURLToPath } from 'node:url'; const require = __sluiceCreateRequire(import.meta.url); const __filename = __sluiceFileURLToPath(import.meta.url); const __dirname = __sluiceJoin(__sluiceDirname(__filename), 'bundle', 'dist');",
  /**
   * Nothing is external: the asset runs from an empty directory (the Lambda task root holds
   * only the asset), and the SDK the runtime ships is not the version we test with. An external
   * package here would be a static `import` at the top of the ESM bundle, even when the code
   * loads it lazily, and the function would fail at cold start with ERR_MODULE_NOT_FOUND.
   */
  external: [] as string[],
  /** rocketmq-client-nodejs's one native dependency, replaced by Node's zlib (functions/edge/node-crc32.ts). */
  alias: { '@node-rs/crc32': './functions/edge/node-crc32.ts' },
} as const;

/** The package.json the asset ships next to index.mjs: what the bundled RocketMQ client reads its version from. */
export function assetPackageJson(): string {
  const client = createRequire(import.meta.url)('rocketmq-client-nodejs/package.json') as { version: string };
  return JSON.stringify({ name: 'sluice-edge', private: true, version: client.version });
}

/**
 * The edge: the Hono app as a Node.js arm64 Lambda (bundled locally by esbuild),
 * a function URL in RESPONSE_STREAM mode (SSE relays chunk by chunk), and CloudFront in
 * front. The function stays outside the VPC: function URLs do not stream from a
 * VPC-attached function (see infra/README.md). Secrets are read at run time by ARN.
 */
export class EdgeStack extends Stack {
  readonly fn: nodejs.NodejsFunction;
  readonly url: lambda.FunctionUrl;
  readonly distribution: cloudfront.Distribution;
  readonly hasWebAcl: boolean;
  readonly hasCustomDomain: boolean;
  readonly originSecret: secretsmanager.Secret;
  readonly adminSecret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: EdgeStackProps) {
    super(scope, id, props);
    this.hasWebAcl = props.webAclArn !== undefined;
    this.hasCustomDomain = props.domainName !== undefined && props.certificateArn !== undefined;
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Own role: logs to its own group only (no AWSLambdaBasicExecutionRole with logs:* on *).
    const role = new iam.Role(this, 'HandlerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Sluice ${props.stage} edge function`,
    });
    logGroup.grantWrite(role);
    // CloudFront proves itself to the function with this header (functions/edge/origin-verify.ts).
    const originSecretName = `sluice/${props.stage}/origin-verify`;
    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      secretName: originSecretName,
      description: `Sluice ${props.stage}: header value CloudFront adds to origin requests; the edge refuses requests without it`,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: SECRET_FIELDS.origin.value,
        excludePunctuation: true,
        passwordLength: 48,
      },
    });
    // The operators' API (/admin/v1) answers only to this key: `aws secretsmanager get-secret-value`.
    const adminSecretName = `sluice/${props.stage}/admin-key`;
    this.adminSecret = new secretsmanager.Secret(this, 'AdminKey', {
      secretName: adminSecretName,
      description: `Sluice ${props.stage}: bearer key of the edge's admin API (/admin/v1)`,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: SECRET_FIELDS.admin.key,
        excludePunctuation: true,
        passwordLength: 48,
      },
    });
    const runtime = { 20: lambda.Runtime.NODEJS_20_X, 22: lambda.Runtime.NODEJS_22_X, 24: lambda.Runtime.NODEJS_24_X }[
      props.nodeMajor
    ];
    this.fn = new nodejs.NodejsFunction(this, 'Handler', {
      role,
      entry: props.entry,
      handler: 'handler',
      depsLockFilePath: props.lockFile,
      runtime,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMiB,
      timeout: Duration.seconds(props.timeoutSeconds),
      ...(props.reservedConcurrency !== undefined ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
      logGroup,
      description: `Sluice ${props.stage} edge (Hono, OpenAI-compatible)`,
      environment: runtimeEnv({
        NODE_OPTIONS: '--enable-source-maps',
        SLUICE_STAGE: props.stage,
        SLUICE_POLICY_SSM_PATH: `${props.parameterPath}/policy`,
        // The function reads the secret by id at run time; its value is never in the template.
        SLUICE_UPSTASH_SECRET_ID: props.upstashSecret.secretName,
        SLUICE_ORIGIN_SECRET_ID: originSecretName,
        SLUICE_ADMIN_SECRET_ID: adminSecretName,
        SLUICE_SPILLOVER_QUEUE_URL: props.spillover.queueUrl,
        SLUICE_ROCKETMQ_TOPIC: ROCKETMQ.parentTopic,
        // Bytes well inside CloudFront's origin read timeout while a request waits; the status URL before Lambda's.
        SLUICE_KEEPALIVE_MS: String(Math.floor((props.originReadTimeoutSeconds * 1000) / 4)),
        SLUICE_MAX_SYNC_WAIT_MS: String(edgeMaxSyncWaitMs(props.timeoutSeconds)),
        ...(props.brokerEndpoint
          ? { SLUICE_ROCKETMQ_ENDPOINTS: props.brokerEndpoint, SLUICE_ROCKETMQ_TLS: 'true' }
          : {}),
        ...(props.brokerCredentials ? { SLUICE_ROCKETMQ_SECRET_ID: props.brokerCredentials.secretArn } : {}),
      }),
      bundling: {
        forceDockerBundling: false,
        format: nodejs.OutputFormat.ESM,
        target: `node${props.nodeMajor}`,
        mainFields: [...EDGE_BUNDLING.mainFields],
        banner: EDGE_BUNDLING.banner,
        externalModules: [...EDGE_BUNDLING.external],
        esbuildArgs: Object.fromEntries(
          Object.entries(EDGE_BUNDLING.alias).map(([from, to]) => [`--alias:${from}`, to]),
        ),
        minify: true,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_input: string, output: string) => [
            `printf '%s' '${assetPackageJson()}' > "${output}/package.json"`,
          ],
        },
        sourceMap: true,
        metafile: false,
      },
    });
    if (props.nodeMajor === 20) {
      // Node.js 20 is deprecated by Lambda (creation ends 2027-02-01); only an explicit edgeNodeMajor=20 gets here.
      (this.fn.node.defaultChild as lambda.CfnFunction).addMetadata('cfn-lint', {
        config: { ignore_checks: ['W2531'] },
      });
    }
    // Least privilege: this secret, this queue, this stage's parameters.
    props.upstashSecret.grantRead(this.fn);
    this.originSecret.grantRead(this.fn);
    this.adminSecret.grantRead(this.fn);
    // The admin API writes limits and reservations back to the stage's policy parameters.
    ConfigStack.grantPolicyWrite(this.fn, this, props.parameterPath);
    props.brokerCredentials?.grantRead(this.fn);
    props.spillover.grantSendMessages(this.fn);
    ConfigStack.grantPolicyRead(this.fn, this, props.parameterPath);

    this.url = this.fn.addFunctionUrl({
      authType: props.originAccess === 'oac' ? lambda.FunctionUrlAuthType.AWS_IAM : lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    const originProps = {
      readTimeout: Duration.seconds(props.originReadTimeoutSeconds),
      keepaliveTimeout: Duration.seconds(60),
      // A dynamic reference, resolved by CloudFormation at deploy time: the value is not in the template.
      customHeaders: {
        [ORIGIN_VERIFY_HEADER]: SecretValue.secretsManager(originSecretName, {
          jsonField: SECRET_FIELDS.origin.value,
        }).unsafeUnwrap(),
      },
    };
    const origin =
      props.originAccess === 'oac'
        ? origins.FunctionUrlOrigin.withOriginAccessControl(this.url, originProps)
        : new origins.FunctionUrlOrigin(this.url, originProps);

    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      // CloudFront standard logging writes with an ACL.
      objectOwnership: s3.ObjectOwnership.OBJECT_WRITER,
      enforceSSL: true,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Sluice ${props.stage} edge`,
      defaultBehavior: {
        origin,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        // Everything but Host (the function URL routes on its own host name). With caching
        // disabled, this managed policy also forwards Authorization (the bearer API key).
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
      },
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      ...(props.domainName && props.certificateArn
        ? {
            domainNames: [props.domainName],
            certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.certificateArn),
            minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
          }
        : {}),
      ...(props.webAclArn ? { webAclId: props.webAclArn } : {}),
      enableLogging: true,
      logBucket: accessLogs,
      logFilePrefix: 'cloudfront/',
    });

    // The origin header's dynamic reference names the secret, which CloudFormation must create first.
    this.distribution.node.addDependency(this.originSecret);

    new CfnOutput(this, 'EdgeUrl', {
      value: `https://${props.domainName ?? this.distribution.distributionDomainName}`,
      description: 'OpenAI-compatible base URL is <EdgeUrl>/v1',
    });
    new CfnOutput(this, 'FunctionUrl', { value: this.url.url, description: 'Direct function URL (streaming)' });
    new CfnOutput(this, 'FunctionName', { value: this.fn.functionName });
  }
}
