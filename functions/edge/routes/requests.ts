/** GET /v1/requests/:id: an async request's status and, once done, its result. Own tenant only. */
import { Hono } from 'hono';
import type { EdgeDeps } from '../deps.js';
import { ApiError } from '../errors.js';
import type { AuthEnv } from '../middleware/auth.js';

export function requestRoutes(deps: EdgeDeps): Hono<AuthEnv> {
  const app = new Hono<AuthEnv>();
  app.get('/requests/:id', async (c) => {
    const id = c.req.param('id');
    const record = await deps.results.get(id);
    // Another tenant's request answers exactly like a missing one: ids leak nothing.
    if (!record || record.tenant !== c.get('account').account.tenant) {
      throw new ApiError(404, `No request with id '${id}'.`, 'invalid_request_error', 'request_not_found', 'id');
    }
    if (record.status === 'queued') return c.json({ id, object: 'sluice.request', status: 'queued' });
    const ok = record.status === 'completed';
    return c.json({
      id,
      object: 'sluice.request',
      status: record.status,
      http_status: record.httpStatus,
      ...(ok ? { result: record.body } : { error: (record.body as { error?: unknown })?.error ?? record.body }),
    });
  });
  return app;
}
