/**
 * Requests must come through CloudFront: the distribution adds a secret header to every
 * origin request (infra/stacks/edge-stack.ts, value from Secrets Manager) and the edge
 * refuses any request without it, so the public function URL cannot be called around
 * CloudFront and its WAF. Wraps the app; the routes do not know.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { Hono } from 'hono';
import { openAiError } from '../../lib/openai-error.js';
import { ORIGIN_VERIFY_HEADER } from '../runtime/contract.js';

export function requireOriginSecret(app: Hono, secret: string): Hono {
  const expected = digest(secret);
  const guarded = new Hono();
  guarded.use('*', async (c, next) => {
    const given = c.req.header(ORIGIN_VERIFY_HEADER);
    // Digests first: equal lengths for timingSafeEqual, and no early exit on a length mismatch.
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return c.json(
        openAiError('Call this API through its CloudFront URL.', 'permission_error', 'origin_not_allowed'),
        403,
      );
    }
    await next();
  });
  guarded.route('/', app);
  return guarded;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
