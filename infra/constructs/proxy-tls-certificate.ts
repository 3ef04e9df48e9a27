/**
 * The RocketMQ proxies' TLS certificate without ACM Private CA: a custom resource whose handler
 * (proxy-tls-handler.cjs, inlined) makes a throwaway CA, signs a server certificate for the
 * name clients dial (the internal NLB's DNS name, known only at deploy time) and forgets the
 * CA's key. Two secrets: the server's certificate and key (read by the proxy tasks only) and
 * the CA certificate (read by the clients, which trust nothing else on that channel).
 */
import { readFileSync } from 'node:fs';
import { CustomResource, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { SECRET_FIELDS } from '../../functions/runtime/contract.ts';

export const PROXY_TLS_HANDLER_SOURCE = readFileSync(new URL('./proxy-tls-handler.cjs', import.meta.url), 'utf8');
export const PROXY_TLS_RESOURCE_TYPE = 'Custom::ProxyTlsCertificate';

export interface ProxyTlsCertificateProps {
  readonly stage: string;
  /** The name clients dial: the certificate's only subjectAltName. */
  readonly dnsName: string;
  /** Days the certificates are valid; a new deploy of a changed resource issues new ones. */
  readonly validityDays: number;
}

export class ProxyTlsCertificate extends Construct {
  /** `{cert, key}` (SECRET_FIELDS.proxyTls): the proxies' server certificate and PKCS#8 key. */
  readonly serverSecret: secretsmanager.Secret;
  /** `{ca}` (SECRET_FIELDS.proxyCa): the CA certificate the clients trust. */
  readonly caSecret: secretsmanager.Secret;
  readonly resource: CustomResource;
  readonly handlerRole: iam.Role;

  constructor(scope: Construct, id: string, props: ProxyTlsCertificateProps) {
    super(scope, id);
    // Placeholders until the handler writes them; generated so no value sits in the template.
    this.serverSecret = new secretsmanager.Secret(this, 'Server', {
      secretName: `sluice/${props.stage}/rocketmq/proxy-tls`,
      description: `Sluice ${props.stage}: RocketMQ proxies' TLS certificate and key (issued at deploy)`,
    });
    this.caSecret = new secretsmanager.Secret(this, 'Ca', {
      secretName: `sluice/${props.stage}/rocketmq/proxy-ca`,
      description: `Sluice ${props.stage}: CA certificate the RocketMQ clients trust for the proxies (issued at deploy)`,
    });
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.handlerRole = new iam.Role(this, 'HandlerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: "Issues the RocketMQ proxies' TLS certificate into its two secrets",
    });
    logGroup.grantWrite(this.handlerRole);
    // Writes only: the handler never reads a secret.
    this.handlerRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:PutSecretValue'],
        resources: [this.serverSecret.secretArn, this.caSecret.secretArn],
      }),
    );
    const handler = new lambda.Function(this, 'Handler', {
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromInline(PROXY_TLS_HANDLER_SOURCE),
      role: this.handlerRole,
      logGroup,
      timeout: Duration.minutes(1),
      description: "Issues the RocketMQ proxies' TLS certificate (a throwaway CA) into Secrets Manager",
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: handler.functionArn,
      resourceType: PROXY_TLS_RESOURCE_TYPE,
      properties: {
        DnsName: props.dnsName,
        ValidityDays: String(props.validityDays),
        ServerSecretId: this.serverSecret.secretArn,
        CaSecretId: this.caSecret.secretArn,
        CertField: SECRET_FIELDS.proxyTls.cert,
        KeyField: SECRET_FIELDS.proxyTls.key,
        CaField: SECRET_FIELDS.proxyCa.cert,
      },
    });
  }
}
