/**
 * The policy in SSM Parameter Store, under one path (`/sluice/<stage>/policy`):
 * each parameter holds JSON, and its name below the path says where it goes:
 * `tiers` is the whole tiers section, `tenants/acme` one tenant. An operator can
 * so change one tenant with one `aws ssm put-parameter`. Reads go through
 * Powertools' SSMProvider (cached for `maxAgeSeconds`); saves write one parameter
 * per section and remove the per-entry ones they replace.
 */
import { DeleteParametersCommand, PutParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { SSMProvider } from '@aws-lambda-powertools/parameters/ssm';
import type { PolicySource } from '../source.js';

export interface SsmSourceOptions {
  readonly client: SSMClient;
  /** e.g. /sluice/prod/policy */
  readonly path: string;
  readonly maxAgeSeconds?: number;
}

/** SSM's standard tier holds 4 KB; larger sections need the advanced tier. */
const STANDARD_LIMIT = 4096;

export function assemble(parameters: Record<string, string>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  // Whole sections first, so `tenants/acme` refines `tenants` rather than being overwritten by it.
  const names = Object.keys(parameters).sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  for (const name of names) {
    let value: unknown;
    try {
      value = JSON.parse(parameters[name]!);
    } catch {
      throw new Error(`parameter "${name}" is not valid JSON`);
    }
    const parts = name.split('/').filter(Boolean);
    let target = doc;
    for (const part of parts.slice(0, -1)) {
      const next = target[part];
      target = (target[part] = next && typeof next === 'object' ? next : {}) as Record<string, unknown>;
    }
    target[parts.at(-1)!] = value;
  }
  return doc;
}

export function ssmSource(options: SsmSourceOptions): PolicySource {
  const path = options.path.replace(/\/$/, '');
  const provider = new SSMProvider({ awsSdkV3Client: options.client });
  const fetchAll = (forceFetch: boolean) =>
    provider.getMultiple(path, { recursive: true, maxAge: options.maxAgeSeconds ?? 30, forceFetch }) as Promise<
      Record<string, string>
    >;

  return {
    name: `ssm:${path}`,
    async load() {
      return assemble(await fetchAll(false));
    },
    async save(policy) {
      const existing = Object.keys(await fetchAll(true));
      const sections = Object.entries(policy as Record<string, unknown>);
      for (const [name, value] of sections) {
        const json = JSON.stringify(value);
        await options.client.send(
          new PutParameterCommand({
            Name: `${path}/${name}`,
            Value: json,
            Type: 'String',
            Overwrite: true,
            Tier: json.length > STANDARD_LIMIT ? 'Advanced' : 'Standard',
          }),
        );
      }
      const replaced = existing.filter((name) => name.includes('/'));
      for (let i = 0; i < replaced.length; i += 10) {
        await options.client.send(
          new DeleteParametersCommand({ Names: replaced.slice(i, i + 10).map((n) => `${path}/${n}`) }),
        );
      }
    },
  };
}
