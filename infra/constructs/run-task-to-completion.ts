/**
 * A custom resource that runs a one-off Fargate task and answers CloudFormation only when the
 * task has stopped: success when its essential container exited 0, failure (and so a failed
 * deploy, rolled back) otherwise, with the exit code and the log stream in the reason. The
 * handler polls DescribeTasks itself, inside its 15-minute limit, and sends the response to
 * CloudFormation's pre-signed URL (no provider framework, so nothing else to run or review).
 */
import { CustomResource, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface RunTaskToCompletionProps {
  readonly cluster: ecs.ICluster;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly subnets: ec2.SubnetSelection;
  readonly vpc: ec2.IVpc;
  readonly securityGroup: ec2.ISecurityGroup;
  /** A new value runs the task again on update. */
  readonly runId: string;
  /** How long the task may take; at most 14 minutes (the handler's own limit is 15). */
  readonly timeout: Duration;
}

export const HANDLER_SOURCE = `
const https = require('node:https');
const { ECSClient, RunTaskCommand, DescribeTasksCommand } = require('@aws-sdk/client-ecs');
const ecs = new ECSClient({});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function run(p) {
  const started = await ecs.send(new RunTaskCommand({
    cluster: p.Cluster, taskDefinition: p.TaskDefinition, launchType: 'FARGATE', count: 1,
    networkConfiguration: { awsvpcConfiguration: { subnets: p.Subnets, securityGroups: p.SecurityGroups, assignPublicIp: 'DISABLED' } },
  }));
  const taskArn = started.tasks && started.tasks[0] && started.tasks[0].taskArn;
  if (!taskArn) throw new Error('RunTask started no task: ' + JSON.stringify(started.failures || []));
  const deadline = Date.now() + Number(p.TimeoutSeconds) * 1000;
  while (Date.now() < deadline) {
    await sleep(10000);
    const d = await ecs.send(new DescribeTasksCommand({ cluster: p.Cluster, tasks: [taskArn] }));
    const t = d.tasks && d.tasks[0];
    if (!t || t.lastStatus !== 'STOPPED') continue;
    const c = (t.containers || [])[0] || {};
    if (c.exitCode === 0) return taskArn;
    throw new Error('task ' + taskArn + ' stopped: exit ' + c.exitCode + ' ' + (c.reason || '') + ' ' + (t.stoppedReason || '') + ' (see the init log stream)');
  }
  throw new Error('task ' + taskArn + ' still running after ' + p.TimeoutSeconds + ' s');
}

function respond(event, status, reason, physicalId, data) {
  const body = JSON.stringify({
    Status: status, Reason: String(reason).slice(0, 3000), PhysicalResourceId: physicalId,
    StackId: event.StackId, RequestId: event.RequestId, LogicalResourceId: event.LogicalResourceId, Data: data || {},
  });
  return new Promise((resolve, reject) => {
    const req = https.request(event.ResponseURL, { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } }, (res) => { res.resume(); res.on('end', resolve); });
    req.on('error', reject);
    req.end(body);
  });
}

exports.handler = async (event) => {
  const p = event.ResourceProperties;
  const physicalId = 'run-task-' + p.RunId;
  try {
    if (event.RequestType === 'Delete') return await respond(event, 'SUCCESS', 'nothing to undo', event.PhysicalResourceId);
    const taskArn = await run(p);
    await respond(event, 'SUCCESS', 'task exited 0', physicalId, { TaskArn: taskArn });
  } catch (err) {
    console.error(err);
    await respond(event, 'FAILED', err && err.message ? err.message : String(err), event.PhysicalResourceId || physicalId);
  }
};
`;

export class RunTaskToCompletion extends Construct {
  readonly handlerRole: iam.Role;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: RunTaskToCompletionProps) {
    super(scope, id);
    if (props.timeout.toSeconds() > 14 * 60) throw new Error('RunTaskToCompletion: timeout above 14 minutes');
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.handlerRole = new iam.Role(this, 'HandlerRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Runs the one-off task of a custom resource and waits for it',
    });
    logGroup.grantWrite(this.handlerRole);
    const stack = Stack.of(this);
    this.handlerRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:RunTask'],
        resources: [props.taskDefinition.taskDefinitionArn],
        conditions: { ArnEquals: { 'ecs:cluster': props.cluster.clusterArn } },
      }),
    );
    this.handlerRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['ecs:DescribeTasks'],
        resources: [
          stack.formatArn({ service: 'ecs', resource: 'task', resourceName: `${props.cluster.clusterName}/*` }),
        ],
      }),
    );
    this.handlerRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [props.taskDefinition.taskRole.roleArn, props.taskDefinition.obtainExecutionRole().roleArn],
      }),
    );
    const handler = new lambda.Function(this, 'Handler', {
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromInline(HANDLER_SOURCE),
      role: this.handlerRole,
      logGroup,
      timeout: Duration.minutes(15),
      description: 'Runs a one-off ECS task for a custom resource and reports its exit to CloudFormation',
    });
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: handler.functionArn,
      resourceType: 'Custom::RunTaskToCompletion',
      properties: {
        Cluster: props.cluster.clusterName,
        TaskDefinition: props.taskDefinition.taskDefinitionArn,
        Subnets: props.vpc.selectSubnets(props.subnets).subnetIds,
        SecurityGroups: [props.securityGroup.securityGroupId],
        TimeoutSeconds: String(props.timeout.toSeconds()),
        RunId: props.runId,
      },
    });
  }
}
