/**
 * TLS and ACL 2.0 credentials for the RocketMQ client, from the configuration: the values
 * themselves (dispatchers: ECS injects them from Secrets Manager) or a secret id read at
 * cold start (the edge: its environment never holds the password).
 */
import { writeFileSync } from 'node:fs';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import type { Config } from './config.js';
import { SECRET_FIELDS } from './contract.js';

export interface RocketMQAccess {
  readonly sslEnabled: boolean;
  readonly credentials?: { readonly accessKey: string; readonly accessSecret: string };
}

type AccessConfig = Pick<
  Config,
  | 'SLUICE_ROCKETMQ_TLS'
  | 'SLUICE_ROCKETMQ_SECRET_ID'
  | 'SLUICE_ROCKETMQ_ACCESS_KEY'
  | 'SLUICE_ROCKETMQ_SECRET_KEY'
  | 'SLUICE_ROCKETMQ_CA_CERT'
  | 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH'
>;

/**
 * Makes the CA the only one the process's gRPC channels trust. rocketmq-client-nodejs builds its
 * channel with `ChannelCredentials.createSsl()` and no roots, so @grpc/grpc-js falls back to the file
 * GRPC_DEFAULT_SSL_ROOTS_FILE_PATH names: it took the name from the environment when it loaded (a bundle
 * loads it at start), and reads the file when the first TLS channel opens, after this. RocketMQ is the
 * process's only gRPC peer, so no other channel loses its roots.
 */
export function trustOnlyForGrpc(
  config: Pick<Config, 'SLUICE_ROCKETMQ_CA_CERT' | 'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH'>,
): void {
  if (!config.SLUICE_ROCKETMQ_CA_CERT) return;
  if (!config.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH) {
    throw new Error(
      'SLUICE_ROCKETMQ_CA_CERT needs GRPC_DEFAULT_SSL_ROOTS_FILE_PATH in the process environment from its start',
    );
  }
  writeFileSync(config.GRPC_DEFAULT_SSL_ROOTS_FILE_PATH, config.SLUICE_ROCKETMQ_CA_CERT, { mode: 0o600 });
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
  return {
    sslEnabled: config.SLUICE_ROCKETMQ_TLS,
    ...(accessKey && accessSecret ? { credentials: { accessKey, accessSecret } } : {}),
  };
}
