import { Stack, type StackProps, CfnOutput, Arn, ArnFormat } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import { Construct } from 'constructs';

export interface ConfigStackProps extends StackProps {
  readonly stage: string;
  /** `/sluice/<stage>`: every policy parameter lives under it. */
  readonly parameterPath: string;
  /** The policy to seed: each top-level key becomes one JSON parameter `<path>/policy/<key>`. */
  readonly seed: Readonly<Record<string, unknown>>;
  /** Secrets Manager secret holding `{"url": …, "token": …}` of the Upstash REST API (created before deploy). */
  readonly upstashSecretName: string;
  readonly gpuApiKeySecretName?: string;
}

/** Standard-tier SSM parameters hold at most 4 KB. */
const STANDARD_LIMIT = 4096;

/**
 * The tunable policy (SSM Parameter Store) and the references to the secrets the edge
 * and the dispatchers read at run time. Values are seeded on first deploy; operators
 * change them with `aws ssm put-parameter --overwrite` and the running code picks them up
 * on its next refresh (no redeploy). A later `cdk deploy` does not reset a parameter whose
 * seed did not change, since CloudFormation only updates resources whose template changed.
 */
export class ConfigStack extends Stack {
  readonly parameterPath: string;
  readonly parameters: ssm.StringParameter[] = [];
  readonly upstashSecret: secretsmanager.ISecret;
  readonly gpuApiKeySecret?: secretsmanager.ISecret;

  constructor(scope: Construct, id: string, props: ConfigStackProps) {
    super(scope, id, props);
    this.parameterPath = props.parameterPath;
    for (const [key, value] of Object.entries(props.seed)) {
      const json = JSON.stringify(value);
      const p = new ssm.StringParameter(this, `Policy-${key}`, {
        parameterName: `${props.parameterPath}/policy/${key}`,
        stringValue: json,
        description: `Sluice ${props.stage} policy: ${key} (JSON)`,
        tier: json.length > STANDARD_LIMIT ? ssm.ParameterTier.ADVANCED : ssm.ParameterTier.STANDARD,
      });
      this.parameters.push(p);
    }
    this.upstashSecret = secretsmanager.Secret.fromSecretNameV2(this, 'Upstash', props.upstashSecretName);
    if (props.gpuApiKeySecretName) {
      this.gpuApiKeySecret = secretsmanager.Secret.fromSecretNameV2(this, 'GpuApiKey', props.gpuApiKeySecretName);
    }
    new CfnOutput(this, 'PolicyPath', { value: `${props.parameterPath}/policy/` });
    new CfnOutput(this, 'UpstashSecretName', { value: props.upstashSecretName });
  }

  /** ARN pattern of every parameter under the stage path (for IAM, in the grantee's stack). */
  static parameterArn(scope: Construct, parameterPath: string): string {
    return Arn.format(
      {
        service: 'ssm',
        resource: 'parameter',
        resourceName: `${parameterPath.replace(/^\//, '')}/*`,
        arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
      },
      Stack.of(scope),
    );
  }

  /** Read access to the stage's policy parameters, and nothing else in SSM. */
  static grantPolicyRead(grantee: iam.IGrantable, scope: Construct, parameterPath: string): void {
    const stack = Stack.of(scope);
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['ssm:GetParametersByPath', 'ssm:GetParameters', 'ssm:GetParameter'],
      resourceArns: [
        ConfigStack.parameterArn(scope, parameterPath),
        // GetParametersByPath is authorized on the path itself.
        Arn.format(
          {
            service: 'ssm',
            resource: 'parameter',
            resourceName: parameterPath.replace(/^\//, ''),
            arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
          },
          stack,
        ),
      ],
    });
  }

  /** ssm:PutParameter on the stage's policy parameters (the edge's admin API). */
  static grantPolicyWrite(grantee: iam.IGrantable, scope: Construct, parameterPath: string): void {
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['ssm:PutParameter'],
      resourceArns: [ConfigStack.parameterArn(scope, parameterPath)],
    });
  }
}
