import { createMiddleware } from 'hono/factory';

export type RequestIdEnv = { Variables: { requestId: string } };

/** Every response carries `x-sluice-request-id`; the same id names the queued request. */
export const requestId = (newId: () => string) =>
  createMiddleware<RequestIdEnv>(async (c, next) => {
    const id = newId();
    c.set('requestId', id);
    c.header('x-sluice-request-id', id);
    await next();
  });
