/**
 * The operators' API under /admin/v1, behind its own credential (never a tenant
 * key): limits, booked bursts, pause and resume. Every change is validated and
 * saved to the policy source (SSM or the local file), then applies at once.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import type { Clock } from '../../../lib/clock/clock.js';
import type { PolicyAdmin } from '../../../lib/policy/admin.js';
import {
  addReservation,
  cancelReservation,
  PolicyEditError,
  setLimits,
  setPaused,
  type LimitsTarget,
} from '../../../lib/policy/edit.js';
import { hashApiKey, resolveLimits } from '../../../lib/policy/resolve.js';
import { own } from '../../../lib/lookup.js';
import { Limits } from '../../../lib/policy/schema.js';
import { ApiError } from '../errors.js';
import { DEFAULT_MAX_BODY_DEPTH, limitBody, readJsonBody } from '../middleware/json-body.js';

export interface AdminDeps {
  /** SHA-256 (hex) of the admin key. */
  readonly keyHash: string;
  readonly policy: PolicyAdmin;
  readonly clock: Clock;
  readonly newId: () => string;
}

const Target = z.discriminatedUnion('level', [
  z.object({ level: z.literal('defaults') }),
  z.object({ level: z.literal('tenant'), tenant: z.string(), model: z.string().optional() }),
  z.object({ level: z.literal('account'), account: z.string() }),
  z.object({ level: z.literal('model'), model: z.string() }),
]);
const SetLimits = z.object({ target: Target, limits: Limits });

export function adminAuth(keyHash: string) {
  const expected = Buffer.from(keyHash, 'hex');
  return createMiddleware(async (c, next) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    const given = match ? Buffer.from(hashApiKey(match[1]!), 'hex') : Buffer.alloc(expected.length);
    if (!match || !timingSafeEqual(given, expected)) {
      throw new ApiError(401, 'The admin API needs the admin key.', 'invalid_request_error', 'invalid_admin_key');
    }
    await next();
  });
}

/** Operators' edits are small documents; anything bigger or deeper is refused before it is read into the policy. */
const ADMIN_BODY_LIMIT_BYTES = 64 * 1024;

async function jsonBody<T>(c: Context, schema: z.ZodType<T>): Promise<T> {
  const raw = await readJsonBody(c, DEFAULT_MAX_BODY_DEPTH);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ApiError(
      400,
      `Invalid request: '${issue.path.join('.')}' ${issue.message}.`,
      'invalid_request_error',
      'invalid_value',
      issue.path.join('.') || null,
    );
  }
  return parsed.data;
}

export function adminRoutes(deps: AdminDeps): Hono {
  const app = new Hono();
  app.use('*', adminAuth(deps.keyHash));
  app.use('*', limitBody(ADMIN_BODY_LIMIT_BYTES));
  const apply = (edit: (raw: unknown) => unknown) =>
    deps.policy.update(edit).catch((error: unknown) => {
      if (error instanceof PolicyEditError) {
        const code = error.status === 409 ? 'conflict' : error.status === 404 ? 'not_found' : 'invalid_policy';
        throw new ApiError(error.status, error.message, 'invalid_request_error', code);
      }
      throw error;
    });

  app.get('/policy', (c) => c.json(deps.policy.current()));

  app.get('/limits', (c) => {
    const policy = deps.policy.current();
    const accountId = c.req.query('account');
    const model = c.req.query('model');
    if (!accountId || !model)
      throw new ApiError(
        400,
        "Give both 'account' and 'model' query parameters.",
        'invalid_request_error',
        'invalid_value',
      );
    const account = own(policy.accounts, accountId);
    if (!account)
      throw new ApiError(404, `unknown account "${accountId}"`, 'invalid_request_error', 'not_found', 'account');
    if (!own(policy.models, model))
      throw new ApiError(404, `unknown model "${model}"`, 'invalid_request_error', 'not_found', 'model');
    return c.json({ account: accountId, model, ...resolveLimits(policy, account, model) });
  });

  app.put('/limits', async (c) => {
    const { target, limits } = await jsonBody(c, SetLimits);
    await apply((raw) => setLimits(raw, target as LimitsTarget, limits));
    return c.json({ target, limits, applied: true });
  });

  app.get('/reservations', (c) => c.json({ object: 'list', data: deps.policy.current().reservations }));
  app.post('/reservations', async (c) => {
    const booking = await jsonBody(c, z.record(z.string(), z.unknown()));
    const withId = { id: `rsv-${deps.newId().slice(-12)}`, ...booking };
    await apply((raw) => addReservation(raw, withId, deps.clock.now()));
    return c.json(
      deps.policy.current().reservations.find((r) => r.id === withId.id),
      201,
    );
  });
  app.delete('/reservations/:id', async (c) => {
    await apply((raw) => cancelReservation(raw, c.req.param('id')));
    return c.json({ id: c.req.param('id'), cancelled: true });
  });

  for (const kind of ['tenants', 'accounts'] as const) {
    for (const action of ['pause', 'resume'] as const) {
      app.post(`/${kind}/:id/${action}`, async (c) => {
        const id = c.req.param('id');
        await apply((raw) =>
          setPaused(raw, kind === 'tenants' ? { tenant: id } : { account: id }, action === 'pause', deps.clock.now()),
        );
        return c.json({ [kind === 'tenants' ? 'tenant' : 'account']: id, paused: action === 'pause' });
      });
    }
  }
  return app;
}
