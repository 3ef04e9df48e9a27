import { Hono } from 'hono';
import type { EdgeDeps } from '../deps.js';
import { modelNotFound } from '../errors.js';

const model = (id: string) => ({ id, object: 'model', created: 0, owned_by: 'sluice' });

/** GET /v1/models and /v1/models/{model}, as OpenAI answers them: the policy's models. */
export function modelRoutes(deps: EdgeDeps): Hono {
  const app = new Hono();
  app.get('/models', (c) => c.json({ object: 'list', data: Object.keys(deps.policy().models).map(model) }));
  // Model ids may hold slashes (org/name), as on Hugging Face and vLLM.
  app.get('/models/:model{.+}', (c) => {
    const id = c.req.param('model');
    if (!Object.hasOwn(deps.policy().models, id)) throw modelNotFound(id);
    return c.json(model(id));
  });
  return app;
}
