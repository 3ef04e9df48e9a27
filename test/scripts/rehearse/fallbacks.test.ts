/**
 * The rehearsal's readings of a deploy that is missing what today's stacks have (an unnamed
 * secret, a broker without ACL credentials, an older lockfile): each is reported by a check and
 * stood in for, so the rest of the deploy is still rehearsed (scripts/rehearse/rehearse.ts).
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deployedRocketMQConf, expandCredentials } from '../../../scripts/rehearse/broker-conf.ts';
import { buildImage, dockerAsset } from '../../../scripts/rehearse/dockerfile.ts';
import { Assembly, seededGpuPorts, stackSecretName, type LocalWorld } from '../../../scripts/rehearse/templates.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'sluice-rehearse-test-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const world: LocalWorld = {
  region: 'us-east-1',
  account: '000000000000',
  queueUrl: () => 'unused',
  queueArn: () => 'unused',
  loadBalancerHost: () => 'localhost',
};

function assembly(templates: Record<string, unknown>): Assembly {
  const dir = tmp();
  for (const [stack, t] of Object.entries(templates))
    writeFileSync(join(dir, `${stack}.template.json`), JSON.stringify(t));
  return new Assembly(dir);
}

describe('secrets', () => {
  it('a named secret keeps its name; an unnamed one is reported and stood in for by its logical id', () => {
    expect(
      stackSecretName('AdminKey', {
        Type: 'AWS::SecretsManager::Secret',
        Properties: { Name: 'sluice/dev/admin-key' },
      }),
    ).toEqual({ name: 'sluice/dev/admin-key', named: true });
    expect(
      stackSecretName('Credentials1A2B', {
        Type: 'AWS::SecretsManager::Secret',
        Properties: { GenerateSecretString: {} },
      }),
    ).toEqual({ name: 'Credentials1A2B', named: false });
  });

  it('a Ref to an unnamed secret resolves to the ARN of its stand-in name, as a Ref to a named one does', () => {
    const app = assembly({
      'Sluice-dev-Broker': {
        Resources: {
          Credentials1A2B: { Type: 'AWS::SecretsManager::Secret', Properties: {} },
          Named: { Type: 'AWS::SecretsManager::Secret', Properties: { Name: 'sluice/dev/rocketmq' } },
        },
      },
    });
    const t = app.stack('Broker');
    expect(app.resolve(t, { Ref: 'Credentials1A2B' }, world)).toBe(
      'arn:aws:secretsmanager:us-east-1:000000000000:secret:Credentials1A2B',
    );
    expect(app.resolve(t, { Ref: 'Named' }, world)).toBe(
      'arn:aws:secretsmanager:us-east-1:000000000000:secret:sluice/dev/rocketmq',
    );
  });
});

describe("a Broker stack without ACL (the shape of 15e2173's default layout)", () => {
  const container = (name: string, file: string, body: string, extra: Record<string, unknown> = {}) => ({
    Name: name,
    Command: [`set -e\ncat > /tmp/${file} <<EOF\n${body}\nEOF\nexec run`],
    ...extra,
  });
  const app = () =>
    assembly({
      'Sluice-dev-Broker': {
        Resources: {
          Broker: {
            Type: 'AWS::ECS::TaskDefinition',
            Properties: {
              ContainerDefinitions: [container('broker', 'broker.conf', 'brokerName=broker-a\nenableLmq=true')],
            },
          },
          Proxy: {
            Type: 'AWS::ECS::TaskDefinition',
            Properties: {
              ContainerDefinitions: [
                container('proxy', 'rmq-proxy.json', '{"grpcServerPort": 8081}', {
                  Environment: [{ Name: 'JAVA_OPT_EXT', Value: '-Xms1g -Xmx1g' }],
                }),
              ],
            },
          },
        },
      },
    });

  it('is read with no credentials secret, no proxy secrets and no system properties', () => {
    const conf = deployedRocketMQConf(app());
    expect(conf.credentialsSecret).toBeUndefined();
    expect(conf.broker).toEqual({ brokerName: 'broker-a', enableLmq: 'true' });
    expect(conf.proxy).toEqual({ grpcServerPort: 8081 });
    expect(conf.proxySystemProperties).toEqual([]);
    expect(conf.proxySecrets).toEqual({});
  });

  it('runs as deployed when expanded with no user: it names none', () => {
    const conf = deployedRocketMQConf(app());
    expect(expandCredentials(conf.broker, '', '')).toEqual(conf.broker);
    expect(expandCredentials(conf.proxy, '', '')).toEqual(conf.proxy);
  });
});

describe('the dispatcher image of an older app', () => {
  it('is built from the asset directory in cdk.out, the context `cdk deploy` hands to docker build', () => {
    const out = tmp();
    writeFileSync(
      join(out, 'Sluice-dev-Dispatchers.assets.json'),
      JSON.stringify({
        dockerImages: { h: { source: { directory: 'asset.abc', dockerFile: 'functions/dispatcher/Dockerfile' } } },
      }),
    );
    expect(dockerAsset(out, 'Sluice-dev-Dispatchers')).toEqual({
      context: join(out, 'asset.abc'),
      dockerFile: 'functions/dispatcher/Dockerfile',
    });
  });

  it("links the repository's node_modules for `npm ci` of the same lockfile, and runs `npm ci` for another", () => {
    const repo = tmp();
    mkdirSync(join(repo, 'node_modules'));
    writeFileSync(join(repo, 'package-lock.json'), '{"lockfileVersion":3,"new":true}');
    // A stand-in npm on PATH that leaves a mark where it ran.
    const bin = tmp();
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\nmkdir -p node_modules && touch node_modules/.installed-by-npm-ci\n');
    chmodSync(join(bin, 'npm'), 0o755);
    const build = (lock: string) => {
      const context = tmp();
      writeFileSync(join(context, 'package-lock.json'), lock);
      writeFileSync(
        join(context, 'Dockerfile'),
        'FROM node:24-slim AS build\nWORKDIR /src\nCOPY package-lock.json ./\nRUN npm ci --ignore-scripts\nCMD ["node", "x.mjs"]\n',
      );
      const path = process.env.PATH;
      process.env.PATH = `${bin}:${path}`;
      try {
        return buildImage({
          dockerfile: join(context, 'Dockerfile'),
          context,
          modules: repo,
          into: join(tmp(), 'image'),
          log: () => {},
        });
      } finally {
        process.env.PATH = path;
      }
    };
    const same = build('{"lockfileVersion":3,"new":true}');
    expect(lstatSync(join(same.workdir, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(same.steps.some((s) => s.includes("linked the repository's node_modules"))).toBe(true);
    const older = build('{"lockfileVersion":3,"old":true}');
    expect(lstatSync(join(older.workdir, 'node_modules')).isSymbolicLink()).toBe(false);
    expect(existsSync(join(older.workdir, 'node_modules', '.installed-by-npm-ci'))).toBe(true);
  });
});

describe('a reused cdk.out', () => {
  it('names the GPU ports it was synthesized with, in the policy the Config stack seeds', () => {
    const models = {
      'sim-llm': { slots: 8, upstreams: ['http://127.0.0.1:9101/v1'] },
      'sim-llm-slow': { slots: 8, upstreams: ['http://127.0.0.1:9102/v1'] },
      remote: { slots: 1, upstreams: ['https://gpu.example.com/v1'] },
    };
    const app = assembly({
      'Sluice-dev-Config': {
        Resources: {
          Models: {
            Type: 'AWS::SSM::Parameter',
            Properties: { Name: '/sluice/dev/policy/models', Value: JSON.stringify(models) },
          },
          Tiers: { Type: 'AWS::SSM::Parameter', Properties: { Name: '/sluice/dev/policy/tiers', Value: '{}' } },
        },
      },
    });
    expect(seededGpuPorts(app)).toEqual({ 'sim-llm': 9101, 'sim-llm-slow': 9102 });
  });
});
