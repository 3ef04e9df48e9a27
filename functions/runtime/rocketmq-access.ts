/**
 * TLS and ACL 2.0 credentials for the RocketMQ client, from the configuration: the values
 * themselves (dispatchers: ECS injects them from Secrets Manager) or a secret id read at
 * cold start (the edge: its environment never holds the password).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import type { Config } from './config.js';
import { SECRET_FIELDS } from './contract.js';

export interface RocketMQAccess {
  readonly sslEnabled: boolean;
  readonly credentials?: { readonly accessKey: string; readonly accessSecret: string };
}

type AccessConfig = Pick<
  Config,
  'SLUICE_ROCKETMQ_TLS' | 'SLUICE_ROCKETMQ_SECRET_ID' | 'SLUICE_ROCKETMQ_ACCESS_KEY' | 'SLUICE_ROCKETMQ_SECRET_KEY' | 'SLUICE_ROCKETMQ_CA_CERT'
>;

/**
 * Makes `caPem` the only CA the process's gRPC channels trust. rocketmq-client-nodejs builds its
 * channel with `ChannelCredentials.createSsl()` and no roots, so @grpc/grpc-js falls back to the
 * file its documented GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names, which it reads from the environment
 * when it is first loaded: call this before the RocketMQ client is imported (parts.ts imports it
 * lazily, after). RocketMQ is the process's only gRPC peer, so no other channel loses its roots.
 */
export function trustOnlyForGrpc(caPem: string, env: Record<string, string | undefined>): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-rocketmq-ca-')), 'ca.pem');
  writeFileSync(file, caPem, { mode: 0o600 });
  env.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH = file;
  return file;
}

export async function rocketmqAccess(
  config: AccessConfig,
  readSecret: (id: string) => Promise<unknown> = (id) => getSecret(id, { transform: 'json', maxAge: 300 }),
): Promise<RocketMQAccess | undefined> {
  let accessKey = config.SLUICE_ROCKETMQ_ACCESS_KEY;
  let accessSecret = config.SLUICE_ROCKETMQ_SECRET_KEY;
  if ((!accessKey || !accessSecret) && config.SLUICE_ROCKETMQ_SECRET_ID) {
    const secret = (await readSecret(config.SLUICE_ROCKETMQ_SECRET_ID)) as Record<string, unknown> | undefined;
    const user = secret?.[SECRET_FIELDS.rocketmq.username];
    const password = secret?.[SECRET_FIELDS.rocketmq.password];
    if (typeof user !== 'string' || typeof password !== 'string') {
      throw new Error(`secret ${config.SLUICE_ROCKETMQ_SECRET_ID} must hold JSON {"username": ..., "password": ...}`);
    }
    accessKey = user;
    accessSecret = password;
  }
  if ((accessKey === undefined) !== (accessSecret === undefined)) {
    throw new Error('SLUICE_ROCKETMQ_ACCESS_KEY and SLUICE_ROCKETMQ_SECRET_KEY go together');
  }
  if (config.SLUICE_ROCKETMQ_CA_CERT && !config.SLUICE_ROCKETMQ_TLS) {
    throw new Error('SLUICE_ROCKETMQ_CA_CERT is the CA of a TLS endpoint: set SLUICE_ROCKETMQ_TLS=true too');
  }
  if (!config.SLUICE_ROCKETMQ_TLS && !accessKey) return undefined;
  return { sslEnabled: config.SLUICE_ROCKETMQ_TLS, ...(accessKey && accessSecret ? { credentials: { accessKey, accessSecret } } : {}) };
}
