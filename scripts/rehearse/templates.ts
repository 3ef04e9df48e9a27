/**
 * The synthesized app as the rehearsal reads it: templates from `cdk.out`, and the few
 * CloudFormation intrinsics the Sluice stacks use, resolved against the local stand-ins
 * (queue URLs and ARNs from ElasticMQ, the proxy NLB's name as the local proxy host).
 * Anything else is an error: a value the rehearsal cannot resolve is a value it did not check.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Json = Record<string, unknown>;
export interface Resource {
  readonly Type: string;
  readonly Properties: Json;
}
export interface Template {
  readonly stack: string;
  readonly Resources: Record<string, Resource>;
  readonly Outputs?: Record<string, { Value: unknown; Export?: { Name: string } }>;
}

export interface LocalWorld {
  readonly region: string;
  readonly account: string;
  /** URL of a queue the rehearsal created, by its name in the template. */
  queueUrl(name: string): string;
  queueArn(name: string): string;
  /** Host the clients use for the load balancer named by this logical id. */
  loadBalancerHost(stack: string, logicalId: string): string;
}

/**
 * The name a stack's secret gets. An unnamed one gets a generated name in AWS, which operators
 * (and the README) cannot know beforehand: the rehearsal reports that and stands its logical id in for it.
 */
export function stackSecretName(logicalId: string, r: Resource): { name: string; named: boolean } {
  return typeof r.Properties.Name === 'string'
    ? { name: r.Properties.Name, named: true }
    : { name: logicalId, named: false };
}

export class Assembly {
  readonly templates = new Map<string, Template>();

  constructor(readonly dir: string) {
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.template.json'))) {
      const stack = f.replace(/\.template\.json$/, '');
      const t = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Omit<Template, 'stack'>;
      this.templates.set(stack, { ...t, stack, Resources: t.Resources ?? {} });
    }
  }

  /** The stack whose name ends with `-<suffix>` (Sluice-<stage>-Edge...). */
  stack(suffix: string): Template {
    const found = [...this.templates.values()].filter((t) => t.stack.endsWith(`-${suffix}`));
    if (found.length !== 1) throw new Error(`expected one *-${suffix} stack in ${this.dir}, found ${found.length}`);
    return found[0]!;
  }

  resources(t: Template, type: string): Array<[string, Resource]> {
    return Object.entries(t.Resources).filter(([, r]) => r.Type === type);
  }

  output(t: Template, key: string): unknown {
    const o = t.Outputs?.[key];
    if (!o) throw new Error(`${t.stack} has no output ${key}`);
    return o.Value;
  }

  /** Resolves a template value in stack `t` to a string. */
  resolve(t: Template, value: unknown, world: LocalWorld): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const v = value as Json;
    if ('Fn::Join' in v) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map((p) => this.resolve(t, p, world)).join(sep);
    }
    if ('Fn::Select' in v) {
      const [i, list] = v['Fn::Select'] as [number, unknown];
      return this.resolveList(t, list, world)[i] ?? '';
    }
    if ('Fn::ImportValue' in v) {
      const name = this.resolve(t, v['Fn::ImportValue'], world);
      for (const other of this.templates.values()) {
        for (const o of Object.values(other.Outputs ?? {}))
          if (o.Export?.Name === name) return this.resolve(other, o.Value, world);
      }
      throw new Error(`no stack exports ${name}`);
    }
    if ('Ref' in v) {
      const ref = v.Ref as string;
      const pseudo: Record<string, string> = {
        'AWS::Region': world.region,
        'AWS::AccountId': world.account,
        'AWS::Partition': 'aws',
        'AWS::URLSuffix': 'amazonaws.com',
        'AWS::StackName': t.stack,
      };
      if (pseudo[ref] !== undefined) return pseudo[ref];
      const r = t.Resources[ref];
      if (r?.Type === 'AWS::SQS::Queue') return world.queueUrl(this.resolve(t, r.Properties.QueueName, world));
      if (r?.Type === 'AWS::SSM::Parameter') return this.resolve(t, r.Properties.Name, world);
      // A secret's ARN without the random suffix: Secrets Manager (and moto) take it as the id.
      if (r?.Type === 'AWS::SecretsManager::Secret')
        return `arn:aws:secretsmanager:${world.region}:${world.account}:secret:${stackSecretName(ref, r).name}`;
      throw new Error(`${t.stack}: cannot resolve Ref ${ref} (${r?.Type ?? 'unknown'})`);
    }
    if ('Fn::GetAtt' in v) {
      const [id, attr] = v['Fn::GetAtt'] as [string, string];
      const r = t.Resources[id];
      if (r?.Type === 'AWS::SQS::Queue') {
        const name = this.resolve(t, r.Properties.QueueName, world);
        if (attr === 'Arn') return world.queueArn(name);
        if (attr === 'QueueName') return name;
        if (attr === 'QueueUrl') return world.queueUrl(name);
      }
      if (r?.Type === 'AWS::ElasticLoadBalancingV2::LoadBalancer' && attr === 'DNSName')
        return world.loadBalancerHost(t.stack, id);
      throw new Error(`${t.stack}: cannot resolve GetAtt ${id}.${attr} (${r?.Type ?? 'unknown'})`);
    }
    throw new Error(`${t.stack}: cannot resolve ${JSON.stringify(value).slice(0, 200)}`);
  }

  private resolveList(t: Template, value: unknown, world: LocalWorld): string[] {
    if (Array.isArray(value)) return value.map((x) => this.resolve(t, x, world));
    const v = value as Json;
    if ('Fn::Split' in v) {
      const [sep, s] = v['Fn::Split'] as [string, unknown];
      return this.resolve(t, s, world).split(sep);
    }
    throw new Error(`${t.stack}: cannot resolve list ${JSON.stringify(value).slice(0, 200)}`);
  }
}

/**
 * The local port of each model's first upstream in the policy the Config stack seeds
 * (`…/policy/models`): a reused cdk.out names the GPU endpoints it was synthesized with.
 */
export function seededGpuPorts(app: Assembly): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const [, p] of app.resources(app.stack('Config'), 'AWS::SSM::Parameter')) {
    const { Name: name, Value: value } = p.Properties;
    if (typeof name !== 'string' || !name.endsWith('/policy/models') || typeof value !== 'string') continue;
    for (const [model, m] of Object.entries(JSON.parse(value) as Record<string, { upstreams?: string[] }>)) {
      const url = m.upstreams?.[0] ? new URL(m.upstreams[0]) : undefined;
      if (url?.hostname === '127.0.0.1' && url.port) ports[model] = Number(url.port);
    }
  }
  return ports;
}
