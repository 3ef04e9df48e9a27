/**
 * The edge's admin key, from the environment or from Secrets Manager
 * (SLUICE_ADMIN_KEY_SECRET_ID). Only its SHA-256 is kept, and requests are
 * compared against it in constant time (routes/admin.ts, dashboard/app.ts).
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { hashApiKey } from '../../lib/policy/resolve.js';
import type { Config } from '../runtime/config.js';

export async function adminKeyHash(config: Config): Promise<string | undefined> {
  if (config.SLUICE_ADMIN_KEY) return hashApiKey(config.SLUICE_ADMIN_KEY);
  if (!config.SLUICE_ADMIN_KEY_SECRET_ID) return undefined;
  const key = await getSecret(config.SLUICE_ADMIN_KEY_SECRET_ID, { maxAge: 300 });
  if (typeof key !== 'string' || key.length < 16) throw new Error(`secret ${config.SLUICE_ADMIN_KEY_SECRET_ID} must hold the admin key`);
  return hashApiKey(key);
}
