/**
 * Where infra and runtime meet: every environment variable a stack gives the edge function
 * or the dispatcher task (plain or as an ECS secret) is one the runtime reads, and every
 * secret field the stacks point ECS at is one the runtime expects. Checked on the
 * synthesized templates of the default layout and of the TLS + ACL layout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_NAMES, isRuntimeEnvName, SECRET_FIELDS } from '../../functions/runtime/contract.ts';
import { readConfig } from '../../functions/runtime/config.ts';
import { synthesize, type Synthesized } from './helpers.ts';

type Json = Record<string, unknown>;

const LAYOUTS: Record<string, Record<string, unknown>> = {
  default: { stage: 'contract' },
  brokerPublicTls: {
    stage: 'contract-tls',
    gpuApiKeySecretName: 'sluice/contract-tls/gpu',
    brokerPublicTls: JSON.stringify({
      certificateArn: 'arn:aws:acm:us-east-1:111122223333:certificate/abc',
      domainName: 'mq.example.com',
    }),
  },
};

/** The environment names and ECS secret references of the edge function and the dispatcher container. */
function processEnvironments(v: Synthesized): { where: string; names: string[]; secretFields: string[] }[] {
  const out: { where: string; names: string[]; secretFields: string[] }[] = [];
  for (const fn of Object.values(v.template('edge').findResources('AWS::Lambda::Function')) as Json[]) {
    const p = fn.Properties as Json;
    if (!String(p.Description ?? '').includes(' edge ')) continue;
    out.push({
      where: 'edge function',
      names: Object.keys(((p.Environment as Json)?.Variables ?? {}) as Json),
      secretFields: [],
    });
  }
  for (const td of Object.values(v.template('dispatchers').findResources('AWS::ECS::TaskDefinition')) as Json[]) {
    for (const c of (td.Properties as Json).ContainerDefinitions as Json[]) {
      const env = ((c.Environment ?? []) as { Name: string }[]).map((e) => e.Name);
      const secrets = (c.Secrets ?? []) as { Name: string; ValueFrom: unknown }[];
      // ValueFrom is "<secret arn>:<json field>::" (an Fn::Join in the template).
      const fields = secrets.map(
        (s) => /:([A-Za-z]+)::"?\]*$/.exec(JSON.stringify(s.ValueFrom).replace(/"\]\]\}$/, '"]'))?.[1] ?? '?',
      );
      out.push({
        where: `dispatcher container ${String(c.Name)}`,
        names: [...env, ...secrets.map((s) => s.Name)],
        secretFields: fields,
      });
    }
  }
  return out;
}

const synthesized = new Map<string, Synthesized>();
beforeAll(() => {
  for (const [name, ctx] of Object.entries(LAYOUTS)) synthesized.set(name, synthesize(ctx, { bundle: false }));
}, 120_000);
afterAll(() => {
  for (const v of synthesized.values()) v.cleanup();
});

describe.each(Object.keys(LAYOUTS))('layout %s', (layout) => {
  it('sets only environment names the runtime reads (functions/runtime/config.ts)', () => {
    const envs = processEnvironments(synthesized.get(layout)!);
    expect(envs.map((e) => e.where)).toEqual(
      expect.arrayContaining(['edge function', 'dispatcher container dispatcher']),
    );
    for (const e of envs) {
      const unread = e.names.filter((n) => !isRuntimeEnvName(n));
      expect(unread, `${e.where} sets names nothing reads`).toEqual([]);
    }
  });

  it('points ECS secrets at the JSON fields the runtime expects', () => {
    const known = new Set<string>(Object.values(SECRET_FIELDS).flatMap((f) => Object.values(f)));
    for (const e of processEnvironments(synthesized.get(layout)!)) {
      for (const f of e.secretFields) expect(known.has(f), `${e.where}: secret field ${f}`).toBe(true);
    }
  });

  it('gives each process an environment the runtime accepts', () => {
    for (const e of processEnvironments(synthesized.get(layout)!)) {
      // Values are tokens or strings here; a placeholder for each checks the names and required set parse.
      const env = Object.fromEntries(e.names.map((n) => [n, placeholder(n)]));
      expect(() => readConfig(env), e.where).not.toThrow();
    }
  });
});

describe('the TLS + ACL layout', () => {
  it('gives the edge TLS and a credentials secret, the dispatchers TLS to the proxies with their CA, credentials and the GPU key', () => {
    const envs = processEnvironments(synthesized.get('brokerPublicTls')!);
    const edge = envs.find((e) => e.where === 'edge function')!;
    expect(edge.names).toEqual(
      expect.arrayContaining(['SLUICE_ROCKETMQ_ENDPOINTS', 'SLUICE_ROCKETMQ_TLS', 'SLUICE_ROCKETMQ_SECRET_ID']),
    );
    const dispatcher = envs.find((e) => e.where.startsWith('dispatcher'))!;
    expect(dispatcher.names).toEqual(
      expect.arrayContaining(['SLUICE_ROCKETMQ_ACCESS_KEY', 'SLUICE_ROCKETMQ_SECRET_KEY', 'SLUICE_UPSTREAM_API_KEY']),
    );
    // Both layouts: inside the VPC the proxies take TLS only, and the dispatchers trust only their CA.
    for (const layout of ['default', 'brokerPublicTls'] as const) {
      const d = processEnvironments(synthesized.get(layout)!).find((e) => e.where.startsWith('dispatcher'))!;
      expect(d.names, layout).toEqual(
        expect.arrayContaining(['SLUICE_ROCKETMQ_TLS', 'SLUICE_ROCKETMQ_CA_CERT', 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH']),
      );
    }
  });
});

function placeholder(name: string): string {
  if (name.endsWith('_URL')) return 'https://example.com/q';
  if (name === 'SLUICE_ROCKETMQ_ENDPOINTS') return 'mq.example.com:8081';
  if (name === 'SLUICE_POLICY_SSM_PATH') return '/sluice/x/policy';
  if (name === 'SLUICE_ROCKETMQ_TLS') return 'true';
  if (name === 'SLUICE_ROCKETMQ_CA_CERT') return '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n';
  if (name === 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH') return '/tmp/ca.pem';
  if (name.endsWith('_MS')) return '115000';
  return 'x';
}

it('config names are unique and all upper-case', () => {
  expect(new Set(CONFIG_NAMES).size).toBe(CONFIG_NAMES.length);
  for (const n of CONFIG_NAMES) expect(n).toMatch(/^[A-Z][A-Z0-9_]*$/);
});
