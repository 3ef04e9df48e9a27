/**
 * The edge's admin key: SLUICE_ADMIN_KEY (local runs) or the Secrets Manager secret the
 * edge stack creates (SLUICE_ADMIN_SECRET_ID, JSON {"key": ...}). Only its SHA-256 is
 * kept, and requests are compared against it in constant time (routes/admin.ts,
 * dashboard/app.ts).
 */
import { hashApiKey } from '../../lib/policy/resolve.js';
import type { Config } from '../runtime/config.js';
import { SECRET_FIELDS } from '../runtime/contract.js';
import { secretField } from '../runtime/secret-field.js';

export async function adminKeyHash(config: Config): Promise<string | undefined> {
  if (config.SLUICE_ADMIN_KEY) return hashApiKey(config.SLUICE_ADMIN_KEY);
  if (!config.SLUICE_ADMIN_SECRET_ID) return undefined;
  return hashApiKey(await secretField(config.SLUICE_ADMIN_SECRET_ID, SECRET_FIELDS.admin.key));
}
