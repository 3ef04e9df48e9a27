/**
 * The operator's dashboard and the Prometheus endpoint, as a Hono sub-app that a
 * server mounts at its root:
 *
 *   GET /dashboard             one self-contained HTML page (no build step)
 *   GET /dashboard/api/state   the live view as JSON; the page polls it once a second
 *   GET /metrics               Prometheus exposition (when a Prometheus sink is given)
 *
 * With `adminKeyHash` set, the state and metrics need `Authorization: Bearer
 * <admin key>` (the same credential as /admin/v1); the page itself holds no data
 * and asks for the key, which it then also uses for pause and resume through the
 * admin API.
 */
import { timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import { hashApiKey } from '../../lib/policy/resolve.js';
import type { PrometheusSink } from '../../lib/telemetry/prometheus.js';
import type { Telemetry } from '../../lib/telemetry/telemetry.js';
import { dashboardPage } from './page.js';

export interface DashboardOptions {
  readonly telemetry: Telemetry;
  readonly prometheus?: PrometheusSink;
  /** SHA-256 (hex) of the admin key; unset = open (local runs on loopback). */
  readonly adminKeyHash?: string;
  /** Serve /metrics without the admin key even when one is set (a scraper on a private network). */
  readonly openMetrics?: boolean;
  /** Where the admin API lives, for the page's pause and resume buttons. */
  readonly adminPath?: string;
  /** Rows per table. */
  readonly rows?: number;
  /** The whole deployment's view (lib/telemetry/aggregate/view.ts); without it, this process's own. */
  readonly view?: (rows: number) => Promise<unknown>;
}

export function createDashboardApp(options: DashboardOptions): Hono {
  const app = new Hono();
  const adminPath = options.adminPath ?? '/admin/v1';
  const html = dashboardPage({ adminPath, needsKey: options.adminKeyHash !== undefined });

  function authorized(c: Context): boolean {
    if (options.adminKeyHash === undefined) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
    if (!match) return false;
    const expected = Buffer.from(options.adminKeyHash, 'hex');
    const given = Buffer.from(hashApiKey(match[1]!), 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  const unauthorized = (c: Context) =>
    c.json(
      {
        error: {
          message: 'The dashboard needs the admin key.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_admin_key',
        },
      },
      401,
    );

  app.get('/dashboard', (c) => {
    c.header('cache-control', 'no-store');
    c.header(
      'content-security-policy',
      "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:",
    );
    return c.html(html);
  });
  app.get('/dashboard/', (c) => c.redirect('/dashboard'));
  app.get('/dashboard/api/state', async (c) => {
    if (!authorized(c)) return unauthorized(c);
    c.header('cache-control', 'no-store');
    const rows = options.rows ?? 10;
    return c.json((options.view ? await options.view(rows) : options.telemetry.live(rows)) as object);
  });
  if (options.prometheus) {
    const prometheus = options.prometheus;
    app.get('/metrics', async (c) => {
      if (!options.openMetrics && !authorized(c)) return unauthorized(c);
      return c.body(await prometheus.scrape(), 200, { 'content-type': prometheus.contentType });
    });
  }
  return app;
}
