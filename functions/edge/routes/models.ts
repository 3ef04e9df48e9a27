import { Hono } from 'hono';
import type { EdgeDeps } from '../deps.js';

/** GET /v1/models, as OpenAI lists them. */
export function modelRoutes(deps: EdgeDeps): Hono {
  const app = new Hono();
  app.get('/models', (c) =>
    c.json({
      object: 'list',
      data: Object.keys(deps.policy().models).map((id) => ({ id, object: 'model', created: 0, owned_by: 'sluice' })),
    }),
  );
  return app;
}
