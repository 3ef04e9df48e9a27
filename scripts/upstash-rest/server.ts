/**
 * A local stand-in for Upstash Redis's REST API, in front of a real redis-server,
 * so the edge's Upstash code path is tested over HTTP with the real client.
 * The protocol follows @upstash/redis 1.39 (pkg/http.ts, pkg/pipeline.ts,
 * pkg/commands/subscribe.ts) as compiled in node_modules.
 *
 * node:http rather than Hono: four routes, one of them a long-lived SSE stream,
 * and the benchmark measures what sits behind this server, so the thinnest
 * HTTP layer is the fairest one.
 */
import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseRedisUrl, RespConnection, RespConnectionError, RespError, type RespValue } from './resp.ts';
import { ScriptRegistry } from './scripts.ts';

export interface UpstashRestServerOptions {
  readonly redisUrl: string;
  readonly token: string;
  /** 0 or absent: a free port. */
  readonly port?: number;
  readonly host?: string;
  readonly log?: (message: string) => void;
}

export interface UpstashRestServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** Upstash's own plans cap a request at 10 MB. */
const MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Refused because the proxy multiplexes every HTTP request over one Redis
 * connection: blocking commands would stall everyone, and connection state
 * (transactions, subscriptions, selected db) would leak between requests.
 * Upstash REST refuses the same families.
 */
const REFUSED = new Set([
  'blpop',
  'brpop',
  'brpoplpush',
  'blmove',
  'blmpop',
  'bzpopmin',
  'bzpopmax',
  'bzmpop',
  'multi',
  'exec',
  'discard',
  'watch',
  'unwatch',
  'subscribe',
  'psubscribe',
  'ssubscribe',
  'unsubscribe',
  'punsubscribe',
  'sunsubscribe',
  'monitor',
  'select',
  'quit',
  'reset',
  'hello',
  'auth',
  'wait',
  'waitaof',
  'sync',
  'psync',
  'shutdown',
]);

type Prepared =
  { readonly args: string[]; readonly post?: (reply: RespValue) => RespValue } | { readonly error: string };

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function toArg(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return JSON.stringify(value);
}

function prepare(raw: unknown, scripts: ScriptRegistry): Prepared {
  if (!Array.isArray(raw) || raw.length === 0) return { error: 'ERR failed to parse command' };
  const args = raw.map(toArg);
  const name = args[0]!.toLowerCase();
  if (REFUSED.has(name)) return { error: `ERR Command is not available: '${args[0]}'` };
  if ((name === 'xread' || name === 'xreadgroup') && args.some((a) => a.toLowerCase() === 'block')) {
    return { error: `ERR Command is not available: '${args[0]} BLOCK'` };
  }
  if ((name === 'eval' || name === 'eval_ro') && args.length > 1) {
    args[1] = scripts.register(args[1]!).text;
  } else if ((name === 'evalsha' || name === 'evalsha_ro') && args.length > 1) {
    args[1] = scripts.resolve(args[1]!);
  } else if (name === 'script' && args.length > 2) {
    const sub = args[1]!.toLowerCase();
    if (sub === 'load') {
      const { text, originalSha } = scripts.register(args[2]!);
      args[2] = text;
      // The caller will EVALSHA the hash of the text it sent.
      return { args, post: (reply) => (reply instanceof RespError ? reply : Buffer.from(originalSha)) };
    }
    if (sub === 'exists') for (let i = 2; i < args.length; i++) args[i] = scripts.resolve(args[i]!);
  }
  return { args };
}

/** Upstash JSON: strings (base64 when asked, status replies too), numbers and null as is. */
function toJson(value: RespValue, base64: boolean): unknown {
  if (Buffer.isBuffer(value)) return base64 ? value.toString('base64') : value.toString('utf8');
  if (Array.isArray(value)) return value.map((v) => toJson(v, base64));
  if (value instanceof RespError) return value.message;
  return value;
}

function item(reply: RespValue, base64: boolean): { result: unknown } | { error: string } {
  return reply instanceof RespError ? { error: reply.message } : { result: toJson(reply, base64) };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpError(413, 'ERR max request size exceeded'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'ERR failed to parse command');
  }
}

function authorized(req: http.IncomingMessage, url: URL, token: Buffer): boolean {
  const header = req.headers.authorization ?? '';
  const given = header.toLowerCase().startsWith('bearer ')
    ? header.slice(7).trim()
    : (url.searchParams.get('_token') ?? '');
  const g = Buffer.from(given);
  return g.length === token.length && timingSafeEqual(g, token);
}

export async function startUpstashRestServer(options: UpstashRestServerOptions): Promise<UpstashRestServer> {
  const target = parseRedisUrl(options.redisUrl);
  const host = options.host ?? '127.0.0.1';
  const token = Buffer.from(options.token);
  const log = options.log ?? (() => {});
  const scripts = new ScriptRegistry();
  const redis = new RespConnection(target, { reconnectMs: 100 });
  await redis.connect();
  const subscribers = new Set<RespConnection>();

  async function single(body: unknown, base64: boolean, res: http.ServerResponse): Promise<void> {
    const p = prepare(body, scripts);
    if ('error' in p) return sendJson(res, 400, { error: p.error });
    let reply = await redis.send(p.args);
    if (p.post) reply = p.post(reply);
    if (reply instanceof RespError) return sendJson(res, 400, { error: reply.message });
    sendJson(res, 200, { result: toJson(reply, base64) });
  }

  async function pipeline(body: unknown, base64: boolean, res: http.ServerResponse): Promise<void> {
    if (!Array.isArray(body) || body.length === 0) throw new HttpError(400, 'ERR failed to parse pipeline request');
    const prepared = body.map((cmd) => prepare(cmd, scripts));
    const runnable = prepared.filter((p): p is Extract<Prepared, { args: string[] }> => 'args' in p);
    const replies = await Promise.all(redis.sendMany(runnable.map((p) => p.args)));
    let next = 0;
    sendJson(
      res,
      200,
      prepared.map((p) => {
        if ('error' in p) return { error: p.error };
        const reply = replies[next++]!;
        return item(p.post ? p.post(reply) : reply, base64);
      }),
    );
  }

  async function multiExec(body: unknown, base64: boolean, res: http.ServerResponse): Promise<void> {
    if (!Array.isArray(body) || body.length === 0) throw new HttpError(400, 'ERR failed to parse multi-exec request');
    const prepared = body.map((cmd) => prepare(cmd, scripts));
    const refused = prepared.find((p): p is { error: string } => 'error' in p);
    if (refused)
      return sendJson(res, 400, {
        error: `EXECABORT Transaction discarded because of previous errors: ${refused.error}`,
      });
    const cmds = prepared as Extract<Prepared, { args: string[] }>[];
    // One write: nothing from another request can land inside MULTI…EXEC.
    const replies = await Promise.all(redis.sendMany([['MULTI'], ...cmds.map((p) => p.args), ['EXEC']]));
    const exec = replies[replies.length - 1]!;
    if (exec instanceof RespError || !Array.isArray(exec)) {
      const cause = replies.slice(1, -1).find((r): r is RespError => r instanceof RespError);
      const message = exec instanceof RespError ? exec.message : 'EXECABORT Transaction aborted';
      return sendJson(res, 400, { error: cause ? `${message} (${cause.message})` : message });
    }
    sendJson(
      res,
      200,
      exec.map((reply, i) => {
        const post = cmds[i]?.post;
        return item(post ? post(reply) : reply, base64);
      }),
    );
  }

  /** SSE lines as @upstash/redis's Subscriber parses them: `data: <type>,<channel>,<message>`. */
  async function subscribe(kind: 'subscribe' | 'psubscribe', channel: string, res: http.ServerResponse): Promise<void> {
    if (!channel) throw new HttpError(400, 'ERR channel is required');
    let started = false;
    const conn: RespConnection = new RespConnection(target, {
      onPush: (value) => {
        if (!Array.isArray(value)) return;
        const parts = value.map((v) =>
          Buffer.isBuffer(v) ? v.toString('utf8') : v instanceof RespError ? v.message : String(v),
        );
        res.write(`data: ${parts.join(',')}\n\n`);
      },
      onClose: () => {
        subscribers.delete(conn);
        if (started) res.end();
      },
    });
    await conn.connect();
    subscribers.add(conn);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.flushHeaders();
    started = true;
    conn.write([kind.toUpperCase(), channel]);
    // Idle proxies and load balancers drop silent streams; comment lines are ignored by clients.
    const heartbeat = setInterval(() => res.write(': ping\n\n'), 15_000);
    heartbeat.unref();
    res.on('close', () => {
      clearInterval(heartbeat);
      subscribers.delete(conn);
      conn.close();
    });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!authorized(req, url, token)) return sendJson(res, 401, { error: 'Unauthorized' });
    if (req.method !== 'POST' && req.method !== 'GET') throw new HttpError(405, 'ERR method not allowed');
    const segments = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const base64 = String(req.headers['upstash-encoding'] ?? '').toLowerCase() === 'base64';
    const head = segments[0]?.toLowerCase();
    if (head === 'subscribe' || head === 'psubscribe') {
      await readBody(req);
      // The client does not escape the channel, so a "/" inside it splits the path.
      return subscribe(head, segments.slice(1).join('/'), res);
    }
    const text = req.method === 'POST' ? await readBody(req) : '';
    if (head === 'pipeline' && segments.length === 1) return pipeline(parseJson(text), base64, res);
    if (head === 'multi-exec' && segments.length === 1) return multiExec(parseJson(text), base64, res);
    if (segments.length === 0) return single(parseJson(text), base64, res);
    // Path-style commands (`/set/key/value`, body as the last argument), as in Upstash's REST docs.
    return single(text ? [...segments, text] : segments, base64, res);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (err instanceof HttpError) return sendJson(res, err.status, { error: err.message });
      if (err instanceof RespConnectionError) return sendJson(res, 503, { error: `ERR ${err.message}` });
      log(`request failed: ${String(err)}`);
      sendJson(res, 500, { error: `ERR ${String(err)}` });
    });
  });
  server.keepAliveTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host}:${port}`;
  log(`upstash-rest listening on ${url} → redis ${target.host}:${target.port}`);

  return {
    url,
    port,
    close: async () => {
      for (const s of subscribers) s.close();
      subscribers.clear();
      redis.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
