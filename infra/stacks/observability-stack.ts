import { Stack, type StackProps, Duration, CfnOutput } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subs from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { METRICS, SLUICE_NAMESPACE } from '../metrics.ts';

export interface BrokerHealthSources {
  readonly proxyTargetGroup: elbv2.INetworkTargetGroup;
  readonly loadBalancer: elbv2.INetworkLoadBalancer;
  readonly brokerService: ecs.IBaseService;
  readonly clusterName: string;
}

export interface ObservabilityStackProps extends StackProps {
  readonly stage: string;
  readonly spillover: sqs.IQueue;
  readonly spilloverDeadLetter: sqs.IQueue;
  /** The edge has no broker endpoint (the default layout): every accepted request goes through the spillover. */
  readonly edgeSpillsByDesign: boolean;
  readonly deadLetter: sqs.IQueue;
  readonly edgeFunction: lambda.IFunction;
  readonly dispatcherService: ecs.FargateService;
  readonly dispatcherBacklog: cloudwatch.IMetric;
  /** Absent with an existing broker endpoint (not ours to watch). */
  readonly broker?: BrokerHealthSources;
  readonly alarmEmail?: string;
  readonly realtimeWarningThreshold: number;
}

/** The dashboard and the alarms an operator of one stage watches. */
export class ObservabilityStack extends Stack {
  readonly topic: sns.Topic;
  readonly alarms: Record<string, cloudwatch.IAlarm> = {};
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ObservabilityStackProps) {
    super(scope, id, props);
    const { stage } = props;
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `Sluice ${stage} alarm topic`,
      enableKeyRotation: true,
    });
    // CloudWatch alarms publish to an encrypted topic only with this.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: { 'aws:SourceAccount': this.account } },
      }),
    );
    this.topic = new sns.Topic(this, 'Alarms', {
      displayName: `Sluice ${stage} alarms`,
      masterKey: key,
      enforceSSL: true,
    });
    if (props.alarmEmail) this.topic.addSubscription(new subs.EmailSubscription(props.alarmEmail));
    const notify = new actions.SnsAction(this.topic);

    const sluice = (
      metricName: string,
      dims: Record<string, string>,
      statistic = 'Sum',
      period = Duration.minutes(1),
    ) =>
      new cloudwatch.Metric({
        namespace: SLUICE_NAMESPACE,
        metricName,
        dimensionsMap: { Stage: stage, ...dims },
        statistic,
        period,
      });

    const alarm = (id: string, a: cloudwatch.Alarm | cloudwatch.CompositeAlarm) => {
      a.addAlarmAction(notify);
      if (a instanceof cloudwatch.Alarm) a.addOkAction(notify);
      this.alarms[id] = a;
      return a;
    };

    // Realtime near its limit: the edge answers admit-with-warning (seed 2: alert, not 429).
    const realtimeWarnings = sluice(METRICS.admissionWarning, { Tier: 'realtime' }, 'Sum', Duration.minutes(5));
    alarm(
      'RealtimeNearLimit',
      new cloudwatch.Alarm(this, 'RealtimeNearLimit', {
        alarmDescription:
          'Realtime traffic is near its limit (admissions with x-sluice-warning). Book a burst or raise the limit in SSM.',
        metric: realtimeWarnings,
        threshold: props.realtimeWarningThreshold,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const dlqDepth = props.deadLetter.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    alarm(
      'DeadLetterNotEmpty',
      new cloudwatch.Alarm(this, 'DeadLetterNotEmpty', {
        alarmDescription:
          'Requests exhausted their attempts (or spillover could not be redriven): inspect the dead-letter queue.',
        metric: dlqDepth,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const spillDlqDepth = props.spilloverDeadLetter.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    alarm(
      'SpilloverDeadLetterNotEmpty',
      new cloudwatch.Alarm(this, 'SpilloverDeadLetterNotEmpty', {
        alarmDescription:
          'Spilled requests could not be redriven into the broker: inspect the spillover dead-letter queue.',
        metric: spillDlqDepth,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const spillDepth = props.spillover.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    // In every layout: spilled requests wait longer than a redrive should take.
    const spillAge = props.spillover.metricApproximateAgeOfOldestMessage({
      period: Duration.minutes(1),
      statistic: 'Maximum',
    });
    alarm(
      'SpilloverNotDraining',
      new cloudwatch.Alarm(this, 'SpilloverNotDraining', {
        alarmDescription: 'Requests wait in the SQS spillover: the dispatchers do not redrive them into the broker.',
        metric: spillAge,
        threshold: 120,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );
    if (!props.edgeSpillsByDesign) {
      // Only where the edge has a broker: there, a spill means the broker refused it.
      alarm(
        'SpilloverInUse',
        new cloudwatch.Alarm(this, 'SpilloverInUse', {
          alarmDescription: 'The edge could not reach the broker and is spilling accepted requests to SQS.',
          metric: sluice(METRICS.spilloverSent, {}),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 2,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }

    // Backlog growing: its per-minute change stays positive for five minutes.
    const backlogGrowth = new cloudwatch.MathExpression({
      expression: 'RATE(backlog) * 60',
      usingMetrics: { backlog: props.dispatcherBacklog },
      label: 'backlog change per minute',
      period: Duration.minutes(1),
    });
    alarm(
      'DispatcherBacklogGrowing',
      new cloudwatch.Alarm(this, 'DispatcherBacklogGrowing', {
        alarmDescription:
          'The LiteTopic backlog has grown every minute for 5 minutes: dispatchers or GPUs cannot keep up.',
        metric: backlogGrowth,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 5,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const edgeErrors = props.edgeFunction.metricErrors({ period: Duration.minutes(1) });
    const edgeThrottles = props.edgeFunction.metricThrottles({ period: Duration.minutes(1) });
    alarm(
      'EdgeThrottled',
      new cloudwatch.Alarm(this, 'EdgeThrottled', {
        alarmDescription: 'The edge function is being throttled by Lambda concurrency.',
        metric: edgeThrottles,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    );

    const brokerWidgets: cloudwatch.IWidget[] = [];
    if (props.broker) {
      const b = props.broker;
      const unhealthyProxies = b.proxyTargetGroup.metrics.unHealthyHostCount({
        period: Duration.minutes(1),
        statistic: 'Maximum',
      });
      const healthyProxies = b.proxyTargetGroup.metrics.healthyHostCount({
        period: Duration.minutes(1),
        statistic: 'Minimum',
      });
      const brokerTasks = new cloudwatch.Metric({
        namespace: 'ECS/ContainerInsights',
        metricName: 'RunningTaskCount',
        dimensionsMap: { ClusterName: b.clusterName, ServiceName: b.brokerService.serviceName },
        statistic: 'Minimum',
        period: Duration.minutes(1),
      });
      const proxyAlarm = new cloudwatch.Alarm(this, 'ProxyUnhealthy', {
        alarmDescription: 'A RocketMQ proxy fails its NLB health check.',
        metric: unhealthyProxies,
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      });
      const brokerDown = new cloudwatch.Alarm(this, 'BrokerNotRunning', {
        alarmDescription: 'The RocketMQ broker task is not running.',
        metric: brokerTasks,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.BREACHING,
      });
      alarm(
        'BrokerUnhealthy',
        new cloudwatch.CompositeAlarm(this, 'BrokerUnhealthy', {
          alarmDescription: 'RocketMQ is unhealthy: a proxy fails health checks or the broker is not running.',
          alarmRule: cloudwatch.AlarmRule.anyOf(proxyAlarm, brokerDown),
        }),
      );
      brokerWidgets.push(
        new cloudwatch.GraphWidget({
          title: 'RocketMQ proxies (NLB targets)',
          left: [healthyProxies, unhealthyProxies],
          width: 12,
        }),
        new cloudwatch.GraphWidget({ title: 'RocketMQ broker tasks running', left: [brokerTasks], width: 12 }),
      );
    }

    const tiers = ['realtime', 'batch', 'offline'];
    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `sluice-${stage}`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarms',
            alarms: Object.values(this.alarms),
            width: 24,
            height: 3,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Admission warnings (near limit) by tier',
            left: tiers.map((t) => sluice(METRICS.admissionWarning, { Tier: t }).with({ label: t })),
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Rejected (429) by tier',
            left: tiers.map((t) => sluice(METRICS.admissionRejected, { Tier: t }).with({ label: t })),
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Edge function',
            left: [props.edgeFunction.metricInvocations({ period: Duration.minutes(1) }), edgeErrors, edgeThrottles],
            right: [props.edgeFunction.metricDuration({ period: Duration.minutes(1), statistic: 'p99' })],
            width: 8,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Dispatcher backlog (absorbed, waiting) and change/min',
            left: [props.dispatcherBacklog],
            right: [backlogGrowth],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'Dispatchers: CPU and in-flight upstream calls',
            left: [props.dispatcherService.metricCpuUtilization({ period: Duration.minutes(1) })],
            right: [sluice(METRICS.inflight, {}, 'Maximum')],
            width: 8,
          }),
          new cloudwatch.GraphWidget({
            title: 'SQS spillover and dead letters',
            left: [spillDepth, dlqDepth, spillDlqDepth],
            right: [sluice(METRICS.spilloverSent, {})],
            width: 8,
          }),
        ],
        brokerWidgets,
      ],
    });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.topic.topicArn });
    new CfnOutput(this, 'DashboardName', { value: this.dashboard.dashboardName });
  }
}
