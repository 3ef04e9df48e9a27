import { createMiddleware } from 'hono/factory';
import { hashApiKey, indexAccounts, type AccountRef } from '../../../lib/policy/resolve.js';
import type { Policy } from '../../../lib/policy/schema.js';
import { ApiError } from '../errors.js';

export type AuthEnv = { Variables: { account: AccountRef } };

/** Looks the bearer key up by its SHA-256; keys themselves are never stored. */
export const bearerAuth = (policy: () => Policy) => {
  const indexes = new WeakMap<Policy, ReadonlyMap<string, AccountRef>>();
  return createMiddleware<AuthEnv>(async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) {
      throw new ApiError(
        401,
        "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'.",
        'invalid_request_error',
        'missing_api_key',
      );
    }
    const current = policy();
    let index = indexes.get(current);
    if (!index) indexes.set(current, (index = indexAccounts(current)));
    const account = index.get(hashApiKey(match[1]!));
    if (!account) throw new ApiError(401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    c.set('account', account);
    await next();
  });
};
