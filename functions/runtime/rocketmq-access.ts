/**
 * TLS and ACL 2.0 credentials for the RocketMQ client, from the configuration: the values
 * themselves (dispatchers: ECS injects them from Secrets Manager) or a secret id read at
 * cold start (the edge: its environment never holds the password).
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import type { Config } from './config.js';
import { SECRET_FIELDS } from './contract.js';

export interface RocketMQAccess {
  readonly sslEnabled: boolean;
  readonly credentials?: { readonly accessKey: string; readonly accessSecret: string };
}

type AccessConfig = Pick<
  Config,
  'SLUICE_ROCKETMQ_TLS' | 'SLUICE_ROCKETMQ_SECRET_ID' | 'SLUICE_ROCKETMQ_ACCESS_KEY' | 'SLUICE_ROCKETMQ_SECRET_KEY'
>;

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
  if (!config.SLUICE_ROCKETMQ_TLS && !accessKey) return undefined;
  return { sslEnabled: config.SLUICE_ROCKETMQ_TLS, ...(accessKey && accessSecret ? { credentials: { accessKey, accessSecret } } : {}) };
}
