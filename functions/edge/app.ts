/**
 * The edge: an OpenAI-compatible Hono app. It authenticates, admits against the
 * hard caps, hands accepted requests to their LiteTopic and answers when the
 * dispatcher has. One app for Lambda, Node and tests (`app.request`).
 */
import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { retryAfterSeconds } from '../../lib/admission/headers.js';
import { StoreUnavailableError } from '../../lib/store/guarded.js';
import type { EdgeDeps } from './deps.js';
import { ApiError, errorResponse } from './errors.js';
import { bearerAuth } from './middleware/auth.js';
import { requestId } from './middleware/request-id.js';
import { inferenceRoutes } from './routes/inference.js';
import { modelRoutes } from './routes/models.js';
import { requestRoutes } from './routes/requests.js';
import { adminRoutes } from './routes/admin.js';
import { traceRoutes } from './routes/traces.js';

export function createEdgeApp(deps: EdgeDeps): Hono {
  const app = new Hono();
  app.use('*', requestId(deps.newId));
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.use('/v1/*', bearerAuth(deps.policy));
  app.route('/v1', inferenceRoutes(deps));
  app.route('/v1', modelRoutes(deps));
  app.route('/v1', requestRoutes(deps));
  if (deps.admin) app.route('/admin/v1', traceRoutes(deps.admin.keyHash, deps.store, deps.clock));
  if (deps.admin) app.route('/admin/v1', adminRoutes(deps.admin));

  app.notFound((c) =>
    errorResponse(
      c,
      new ApiError(404, `Unknown route ${c.req.method} ${c.req.path}.`, 'invalid_request_error', 'unknown_route'),
    ),
  );
  app.onError((error, c) => {
    if (error instanceof ApiError) return errorResponse(c, error);
    if (error instanceof StoreUnavailableError) {
      // Fail-closed policy while the shared store is away: a clear, retriable answer.
      return errorResponse(
        c,
        new ApiError(
          503,
          'Rate limiting is temporarily unavailable; please retry shortly.',
          'server_error',
          'limiter_unavailable',
          null,
          {
            'retry-after': retryAfterSeconds(error.retryAfterMs),
          },
        ),
      );
    }
    if (error instanceof HTTPException && error.status < 500) {
      return errorResponse(c, new ApiError(error.status as 400, error.message, 'invalid_request_error'));
    }
    deps.log.error(
      { err: error instanceof Error ? error.message : String(error), path: c.req.path },
      'unhandled edge error',
    );
    return errorResponse(
      c,
      new ApiError(500, 'The server had an error while processing your request.', 'server_error', 'internal_error'),
    );
  });
  return app;
}
