/**
 * `GET /admin/v1/requests/:id/trace`: one request's timeline from the shared
 * store, whichever edge and dispatchers handled it. Behind the admin key.
 */
import { Hono } from 'hono';
import type { Clock } from '../../../lib/clock/clock.js';
import type { AggregateOps } from '../../../lib/store/aggregate.js';
import { readTrace } from '../../../lib/telemetry/aggregate/trace.js';
import { ApiError } from '../errors.js';
import { adminAuth } from './admin.js';

export function traceRoutes(keyHash: string, store: Pick<AggregateOps, 'readLines'>, clock: Clock): Hono {
  const app = new Hono();
  app.use('/requests/*', adminAuth(keyHash));
  app.get('/requests/:id/trace', async (c) => {
    const id = c.req.param('id');
    const steps = await readTrace(store, id, clock.now());
    if (!steps) {
      const message = `No trace for request '${id.slice(0, 128)}' (traces are kept for minutes).`;
      throw new ApiError(404, message, 'invalid_request_error', 'not_found', 'id');
    }
    return c.json({ object: 'request.trace', id, steps });
  });
  return app;
}
