import { Stack, type StackProps, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as ssm from 'aws-cdk-lib/aws-ssm';
import type { Construct } from 'constructs';
import type { ExistingVpcConfig } from '../config.ts';

export interface NetworkStackProps extends StackProps {
  readonly stage: string;
  readonly availabilityZones?: string[];
  readonly vpcCidr: string;
  readonly natGateways: number;
  /** Use this VPC instead of creating one (described by attributes: no lookup). */
  readonly existingVpc?: ExistingVpcConfig;
}

/** The VPC the broker and the dispatchers run in: private subnets with NAT egress. */
export class NetworkStack extends Stack {
  readonly vpc: ec2.IVpc;

  constructor(scope: Construct, id: string, props: NetworkStackProps) {
    super(scope, id, props);
    if (props.existingVpc) {
      const e = props.existingVpc;
      this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
        vpcId: e.vpcId,
        vpcCidrBlock: e.vpcCidrBlock,
        availabilityZones: e.availabilityZones,
        privateSubnetIds: e.privateSubnetIds,
        ...(e.privateSubnetRouteTableIds ? { privateSubnetRouteTableIds: e.privateSubnetRouteTableIds } : {}),
        ...(e.publicSubnetIds ? { publicSubnetIds: e.publicSubnetIds } : {}),
      });
      this.record(props.stage);
      return;
    }
    const vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(props.vpcCidr),
      ...(props.availabilityZones ? { availabilityZones: props.availabilityZones } : { maxAzs: 2 }),
      natGateways: props.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 20 },
      ],
      restrictDefaultSecurityGroup: true,
    });
    const flowLogs = new logs.LogGroup(this, 'FlowLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    vpc.addFlowLog('FlowLog', {
      destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs),
      trafficType: ec2.FlowLogTrafficType.REJECT,
    });
    // AWS APIs the tasks call stay off the NAT path.
    vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    this.vpc = vpc;
    this.record(props.stage);
  }

  /** Records which VPC the stage uses (and keeps the stack non-empty with an existing VPC). */
  private record(stage: string): void {
    new ssm.StringParameter(this, 'VpcIdParameter', {
      parameterName: `/sluice/${stage}/network/vpc-id`,
      stringValue: this.vpc.vpcId,
      description: `VPC of Sluice ${stage} (broker and dispatchers)`,
    });
  }
}
