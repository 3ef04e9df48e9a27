/**
 * Every cdk-nag (AwsSolutions) finding Sluice accepts, each on the narrowest construct
 * and each with the reason a reviewer needs. Anything not listed here fails synthesis.
 */
import { Stack, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { SluiceStacks } from './sluice.ts';

export interface Acknowledged {
  readonly path: string;
  readonly id: string;
  readonly reason: string;
}

/** Everything acknowledged, for the test that checks each reason is substantive. */
export const ACKNOWLEDGED: Acknowledged[] = [];

function ack(scope: IConstruct, rule: string, reason: string): void {
  const id = /^(AwsSolutions|CloudFormation-Validate|Annotation)::/.test(rule) ? rule : `AwsSolutions::${rule}`;
  Validations.of(scope).acknowledge({ id, reason });
  ACKNOWLEDGED.push({ path: scope.node.path, id, reason });
}

function child(scope: IConstruct, ...path: string[]): IConstruct {
  let c = scope;
  for (const p of path) c = c.node.findChild(p);
  return c;
}

/** The ARN pattern cdk-nag prints for the stage's parameter path grant. */
function ssmFinding(stack: Stack, parameterPath: string): string {
  const region = Stack.of(stack).region;
  const account = stack.account.startsWith('${Token') ? '<AWS::AccountId>' : stack.account;
  const r = region.startsWith('${Token') ? '<AWS::Region>' : region;
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ssm:${r}:${account}:parameter${parameterPath}/*]`;
}

/** Region and account as cdk-nag prints them in a finding: the value, or the pseudo parameter. */
function where(stack: Stack): { region: string; account: string } {
  return {
    region: stack.region.startsWith('${Token') ? '<AWS::Region>' : stack.region,
    account: stack.account.startsWith('${Token') ? '<AWS::AccountId>' : stack.account,
  };
}

const KMS_WILDCARDS =
  "CDK's SQS send/consume grant on a KMS-encrypted queue: kms:GenerateDataKey*/ReEncrypt* are action families (no narrower actions exist for envelope encryption) and the statement's resource is the one queue key, not *.";
const ECS_ENV =
  'The environment holds non-secret configuration only (endpoints, topic and group names, JVM heap flags, parameter path); every credential is injected through `secrets` from Secrets Manager.';

export function applySuppressions(s: SluiceStacks): void {
  const path = s.config.parameterPath;
  const ssmReason = `Reads the policy of this stage only: every parameter under ${path}/ (the policy is one parameter per key and operators add keys at run time, so the path, not a fixed list, is the boundary).`;

  // --- Edge
  const edgeRolePolicy = child(s.edge, 'HandlerRole', 'DefaultPolicy');
  ack(edgeRolePolicy, 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]', KMS_WILDCARDS);
  ack(edgeRolePolicy, 'AwsSolutions-IAM5[Action::kms:ReEncrypt*]', KMS_WILDCARDS);
  ack(edgeRolePolicy, ssmFinding(s.edge, path), ssmReason);
  if (s.edge.fn.runtime.name !== 'nodejs24.x') {
    ack(
      s.edge.fn,
      'AwsSolutions-L1',
      `${s.edge.fn.runtime.name} chosen with context edgeNodeMajor (the default is 24, the latest Lambda Node.js runtime).`,
    );
  }
  if (s.edge.fn.runtime.name === 'nodejs20.x') {
    ack(
      s.edge.fn,
      'CloudFormation-Validate::W2531',
      'Same as AwsSolutions-L1: Node.js 20 chosen with context edgeNodeMajor.',
    );
  }
  ack(
    child(s.edge, 'AccessLogs'),
    'AwsSolutions-S1',
    'This bucket is the CloudFront access-log destination; logging it into itself would loop, and a second log bucket would only move the finding.',
  );
  ack(
    s.edge.originSecret,
    'AwsSolutions-SMG4',
    'CloudFront reads this value at deploy time (a dynamic reference in the origin headers) and the edge at cold start: a scheduled rotation would change the secret without changing the distribution, and the edge would refuse CloudFront. Rotate by putting a new value and redeploying the Edge stack (infra/README.md).',
  );
  ack(
    s.edge.adminSecret,
    'AwsSolutions-SMG4',
    'The edge reads the admin key at cold start; rotate by putting a new value and letting new instances start (a managed rotation would need a rotation function for a value nothing else stores).',
  );
  const dist = s.edge.distribution;
  ack(
    dist,
    'AwsSolutions-CFR1',
    'An API for tenants anywhere; who may call it is decided per API key by the edge, not by country. Add geo restrictions per deployment if required.',
  );
  if (!s.edge.hasWebAcl) {
    ack(
      dist,
      'AwsSolutions-CFR2',
      'Request admission (per account, tenant and model) is the edge function’s own job; a WAF web ACL can be attached with context edgeWebAclArn (a CLOUDFRONT-scope ACL lives in us-east-1 and cannot be created by this regional stack).',
    );
  }
  if (!s.edge.hasCustomDomain) {
    ack(
      dist,
      'AwsSolutions-CFR4',
      'Without a custom domain the distribution must use the default *.cloudfront.net certificate, whose policy CloudFront fixes; set context edgeDomainName + edgeCertificateArn to enforce TLSv1.2_2021.',
    );
    ack(
      dist,
      'Annotation::@aws-cdk/aws-cloudfront:minimumProtocolVersionWithoutCertificate',
      'See AwsSolutions-CFR4: the minimum protocol applies once a custom certificate is configured.',
    );
  }

  // --- Queues
  ack(
    s.queues.deadLetter,
    'AwsSolutions-SQS3',
    'This is the last stop: the dispatchers write requests that failed for good here, with their reason, for an operator (alarm DeadLetterNotEmpty). A dead-letter queue of a dead-letter queue would only move the question.',
  );

  // --- Dispatchers
  const dTask = s.dispatchers.service.taskDefinition;
  ack(dTask, 'AwsSolutions-ECS2', ECS_ENV);
  const dTaskPolicy = child(dTask, 'TaskRole', 'DefaultPolicy');
  ack(dTaskPolicy, 'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]', KMS_WILDCARDS);
  ack(dTaskPolicy, 'AwsSolutions-IAM5[Action::kms:ReEncrypt*]', KMS_WILDCARDS);
  ack(dTaskPolicy, ssmFinding(s.dispatchers, path), ssmReason);
  ack(
    child(dTask, 'ExecutionRole', 'DefaultPolicy'),
    'AwsSolutions-IAM5[Resource::*]',
    'ecr:GetAuthorizationToken (pulling the dispatcher image) supports no resource-level permission; the image pull actions themselves are scoped to the asset repository.',
  );

  // --- Broker
  const b = s.broker;
  if (b) {
    for (const td of b.taskDefinitions) ack(td, 'AwsSolutions-ECS2', ECS_ENV);
    ack(
      b.loadBalancer,
      'AwsSolutions-ELB2',
      "Internal NLB with a TCP listener that passes the clients' TLS through to the proxies (the proxies hold the certificate): NLB access logs are only written for TLS listeners, so there is nothing to log (the public TLS listener, when enabled, logs to S3).",
    );
    ack(
      child(b.initFunctionRole, 'DefaultPolicy'),
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ecs:${where(b).region}:${where(b).account}:task/<ClusterEB0386A7>/*]`,
      'The init handler waits for the task it started with ecs:DescribeTasks, whose resource is the task ARN, known only at run time; the wildcard is this cluster’s tasks. It may start only the init task definition (ecs:RunTask with an ecs:cluster condition) and pass only that task’s two roles.',
    );
    if (b.publicLogBucket) {
      ack(
        b.publicLogBucket,
        'AwsSolutions-S1',
        'This bucket is the public NLB’s access-log destination; logging it into itself would loop.',
      );
    }
    for (const secret of [b.credentials, b.dispatcherCredentials, b.edgeCredentials]) {
      if (!secret) continue;
      ack(
        secret,
        'AwsSolutions-SMG4',
        'A RocketMQ ACL user lives in the broker’s own user store (the super user written on first start, the others by the init task); a managed rotation would change the secret without changing the broker user. Rotate by hand with mqadmin updateUser, then put-secret-value and restart the tasks (infra/README.md).',
      );
    }
    for (const secret of [b.proxyTlsSecret, b.proxyCaSecret]) {
      ack(
        secret,
        'AwsSolutions-SMG4',
        "Written by the deploy-time certificate custom resource (a CA whose key is discarded, and the proxies' certificate): a managed rotation would change the secret without a certificate the other side accepts. A new certificate is issued when the resource changes (the internal NLB's name, the validity) (infra/README.md).",
      );
    }
    if (b.publicNlbSecurityGroup) {
      ack(
        b.publicNlbSecurityGroup,
        'AwsSolutions-EC23',
        'Public TLS entry for the edge function, which runs outside the VPC (function URL streaming is unsupported for VPC functions) from unpredictable AWS addresses; the listener is TLS 1.3 only and the proxies require RocketMQ ACL credentials.',
      );
    }
  }
}
