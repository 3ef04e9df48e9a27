/**
 * A Lambda function URL in front of a local Lambda Runtime API, and CloudFront's origin
 * timeouts in front of that: what a client of the deployed edge talks to, on loopback.
 *
 * - Runtime API (2018-06-01): `invocation/next` long polls, `response` buffered or streamed
 *   (`Lambda-Runtime-Function-Response-Mode: streaming`, chunked), `error`, `init/error`.
 *   Execution environments (each a runtime interface client process) are started on demand,
 *   one invocation at a time each, up to `maxEnvironments`, as Lambda scales.
 * - Function URL: each HTTP request becomes a payload 2.0 event; a streamed response is
 *   split at the `application/vnd.awslambda.http-integration-response` prelude (JSON and
 *   eight NUL bytes) into status, headers and a body relayed chunk by chunk.
 * - CloudFront: no byte from the origin for `originReadTimeoutSeconds` (first byte or
 *   between two) ends the response, 504 if nothing was sent yet; the Host header is the
 *   function URL's own (the origin request policy forwards everything but Host).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Environment {
  /** Stops the environment's process. */
  stop(): Promise<void>;
  /** Resolves when the process ends on its own (a failed init exits): Lambda discards such an environment. */
  readonly exited: Promise<void>;
}

export interface FunctionUrlOptions {
  /** Starts one execution environment pointed at `runtimeApi` (host:port). */
  readonly startEnvironment: (runtimeApi: string, index: number) => Environment;
  readonly maxEnvironments: number;
  readonly functionTimeoutSeconds: number;
  readonly originReadTimeoutSeconds: number;
  readonly functionArn: string;
  /** Headers CloudFront adds to each origin request (the distribution's OriginCustomHeaders). */
  readonly originHeaders: Record<string, string>;
  readonly log: (line: string) => void;
}

export interface FunctionUrlFront {
  /** The CloudFront-like front's base URL. */
  readonly url: string;
  /** The function URL itself, called directly (no CloudFront headers, no CloudFront timeouts). */
  readonly functionUrl: string;
  readonly runtimeApi: string;
  /** Environments started so far (cold starts). */
  environments(): number;
  /** Errors reported on `init/error` (a handler that failed to load). */
  readonly initErrors: string[];
  close(): Promise<void>;
}

interface Invocation {
  readonly id: string;
  readonly event: string;
  readonly deadlineMs: number;
  readonly respond: (res: IncomingMessage) => void;
  readonly fail: (error: string) => void;
}

const MAX_REQUEST_BYTES = 6 * 1024 * 1024;
const PRELUDE_TYPE = 'application/vnd.awslambda.http-integration-response';
const TEXT_TYPES = /^(text\/|application\/(json|[\w.+-]*\+json|xml|javascript|x-www-form-urlencoded))/i;

export async function startFunctionUrl(options: FunctionUrlOptions): Promise<FunctionUrlFront> {
  const queue: Invocation[] = [];
  const pollers: Array<(inv: Invocation) => void> = [];
  const inFlight = new Map<string, Invocation>();
  const environments: Environment[] = [];
  const initErrors: string[] = [];
  let busy = 0;

  function dispatch(inv: Invocation) {
    const poller = pollers.shift();
    if (poller) return poller(inv);
    queue.push(inv);
    // As in Lambda, an invocation no environment will take gets a new one: each environment still
    // initializing takes one queued invocation when it polls; the rest would wait behind a busy one.
    const initializing = environments.length - busy - pollers.length;
    if (environments.length < options.maxEnvironments && queue.length > initializing) coldStart();
  }

  let started = 0;
  function coldStart() {
    started++;
    options.log(`cold start: execution environment ${started}`);
    const env = options.startEnvironment(runtimeApi, started - 1);
    environments.push(env);
    void env.exited.then(() => {
      environments.splice(environments.indexOf(env), 1);
      // The next invocation waiting gets a fresh environment (and a fresh init), as in Lambda.
      if (queue.length > 0 && !closing && started < 50) coldStart();
    });
  }
  let closing = false;

  const api = createServer((req, res) => void runtimeApiRoute(req, res));
  async function runtimeApiRoute(req: IncomingMessage, res: ServerResponse) {
    const url = req.url ?? '';
    if (req.method === 'GET' && url === '/2018-06-01/runtime/invocation/next') {
      const inv = queue.shift() ?? (await new Promise<Invocation>((resolve) => pollers.push(resolve)));
      inFlight.set(inv.id, inv);
      busy++;
      res.writeHead(200, {
        'content-type': 'application/json',
        'lambda-runtime-aws-request-id': inv.id,
        'lambda-runtime-deadline-ms': String(inv.deadlineMs),
        'lambda-runtime-invoked-function-arn': options.functionArn,
        'lambda-runtime-trace-id': `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replace(/-/g, '').slice(0, 24)};Sampled=0`,
      });
      res.end(inv.event);
      return;
    }
    const m = /^\/2018-06-01\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    if (req.method === 'POST' && m) {
      const inv = inFlight.get(decodeURIComponent(m[1]!));
      if (!inv) {
        res.writeHead(404).end();
        return;
      }
      const done = () => {
        inFlight.delete(inv.id);
        busy--;
      };
      if (m[2] === 'error') {
        const body = await readAll(req);
        done();
        inv.fail(body.toString());
        res.writeHead(202).end('{"status":"OK"}');
        return;
      }
      req.on('end', () => {
        done();
        // A failure in the middle of a stream arrives as trailers.
        const errorType = req.trailers['lambda-runtime-function-error-type'];
        if (errorType)
          options.log(
            `invocation ${inv.id} failed mid-stream: ${errorType} ${req.trailers['lambda-runtime-function-error-body'] ?? ''}`,
          );
        res.writeHead(202).end('{"status":"OK"}');
      });
      inv.respond(req);
      return;
    }
    if (req.method === 'POST' && url === '/2018-06-01/runtime/init/error') {
      const body = (await readAll(req)).toString();
      initErrors.push(body);
      options.log(`init error: ${body}`);
      res.writeHead(202).end('{"status":"OK"}');
      for (const inv of queue.splice(0)) inv.fail(body);
      return;
    }
    res.writeHead(404).end();
  }
  await listen(api);
  const runtimeApi = `127.0.0.1:${(api.address() as AddressInfo).port}`;

  const urlId = randomUUID().replace(/-/g, '').slice(0, 32);
  const functionHost = `${urlId}.lambda-url.us-east-1.on.aws`;
  const front = createServer((req, res) => void frontRoute(req, res, true));
  const direct = createServer((req, res) => void frontRoute(req, res, false));
  async function frontRoute(req: IncomingMessage, res: ServerResponse, viaCloudFront: boolean) {
    let body: Buffer;
    try {
      body = await readAll(req, MAX_REQUEST_BYTES);
    } catch {
      res.writeHead(413, { 'content-type': 'application/json' }).end('{"Message":"Request Too Long"}');
      return;
    }
    if (viaCloudFront) for (const [k, v] of Object.entries(options.originHeaders)) req.headers[k.toLowerCase()] = v;
    const event = functionUrlEvent(req, body, functionHost, urlId, viaCloudFront);
    const readTimeoutMs = (viaCloudFront ? options.originReadTimeoutSeconds : options.functionTimeoutSeconds) * 1000;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        options.log(`origin read timeout (${options.originReadTimeoutSeconds} s) on ${req.method} ${req.url}`);
        if (!res.headersSent)
          res
            .writeHead(504, { 'content-type': 'text/html', 'x-cache': 'Error from cloudfront' })
            .end('504 Gateway Timeout');
        else res.destroy();
      }, readTimeoutMs);
    };
    arm();
    res.on('close', () => clearTimeout(timer));
    dispatch({
      id: randomUUID(),
      event: JSON.stringify(event),
      deadlineMs: Date.now() + options.functionTimeoutSeconds * 1000,
      fail: (error) => {
        clearTimeout(timer);
        if (!res.headersSent)
          res
            .writeHead(502, { 'content-type': 'application/json' })
            .end(JSON.stringify({ Message: 'Internal Server Error', error }));
        else res.destroy();
      },
      respond: (stream) => {
        // CloudFront has already answered (504 on its origin read timeout): the function's response goes nowhere.
        if (res.headersSent) return void stream.resume();
        relay(stream, res, arm, () => clearTimeout(timer));
      },
    });
  }
  await listen(front);
  await listen(direct);
  const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
  const functionUrl = `http://127.0.0.1:${(direct.address() as AddressInfo).port}`;
  options.log(`function URL front on ${url} (Runtime API ${runtimeApi})`);
  return {
    url,
    functionUrl,
    runtimeApi,
    environments: () => started,
    initErrors,
    async close() {
      closing = true;
      await Promise.all(environments.map((e) => e.stop()));
      for (const server of [front, direct, api]) server.closeAllConnections();
      await Promise.all([front, direct, api].map((server) => new Promise((r) => server.close(r))));
    },
  };
}

/** Relays the function's response: the streaming prelude becomes status and headers, the rest flows as it comes. */
function relay(stream: IncomingMessage, res: ServerResponse, onBytes: () => void, onEnd: () => void) {
  const streaming = String(stream.headers['lambda-runtime-function-response-mode'] ?? '').toLowerCase() === 'streaming';
  const isPrelude = String(stream.headers['content-type'] ?? '').startsWith(PRELUDE_TYPE);
  let head = Buffer.alloc(0);
  let started = false;
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    onBytes();
    if (!streaming) return void chunks.push(chunk);
    if (started) return void res.write(chunk);
    if (!isPrelude) {
      started = true;
      res.writeHead(200, { 'content-type': String(stream.headers['content-type'] ?? 'application/octet-stream') });
      return void res.write(chunk);
    }
    head = Buffer.concat([head, chunk]);
    const sep = head.indexOf(Buffer.alloc(8));
    if (sep < 0) return;
    const prelude = JSON.parse(head.subarray(0, sep).toString()) as {
      statusCode?: number;
      headers?: Record<string, string>;
      cookies?: string[];
    };
    started = true;
    res.writeHead(prelude.statusCode ?? 200, {
      ...(prelude.headers ?? {}),
      ...(prelude.cookies?.length ? { 'set-cookie': prelude.cookies } : {}),
    });
    const rest = head.subarray(sep + 8);
    if (rest.length > 0) res.write(rest);
  });
  stream.on('end', () => {
    onEnd();
    if (streaming) {
      if (!started) res.writeHead(200);
      res.end();
      return;
    }
    bufferedResponse(Buffer.concat(chunks), res);
  });
  stream.on('error', () => res.destroy());
}

/** A buffered function URL response: a `{statusCode, headers, body}` object, or any other JSON as the body. */
function bufferedResponse(raw: Buffer, res: ServerResponse) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString());
  } catch {
    parsed = raw.toString();
  }
  if (parsed && typeof parsed === 'object' && 'statusCode' in parsed) {
    const r = parsed as {
      statusCode: number;
      headers?: Record<string, string>;
      body?: string;
      isBase64Encoded?: boolean;
    };
    res.writeHead(r.statusCode, r.headers ?? {});
    res.end(r.body === undefined ? '' : Buffer.from(r.body, r.isBase64Encoded ? 'base64' : 'utf8'));
    return;
  }
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(typeof parsed === 'string' ? parsed : JSON.stringify(parsed));
}

/** The payload 2.0 event a function URL sends for this request. */
export function functionUrlEvent(
  req: IncomingMessage,
  body: Buffer,
  host: string,
  urlId: string,
  viaCloudFront: boolean,
) {
  const url = new URL(req.url ?? '/', 'http://front');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined && k !== 'cookie') headers[k] = Array.isArray(v) ? v.join(',') : v;
  headers.host = host;
  headers['x-forwarded-proto'] = 'https';
  headers['x-forwarded-for'] = req.socket.remoteAddress ?? '127.0.0.1';
  if (viaCloudFront) {
    headers['x-amz-cf-id'] = randomUUID();
    headers.via = '2.0 rehearsal.cloudfront.net (CloudFront)';
  }
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = query[k] === undefined ? v : `${query[k]},${v}`;
  const text = body.length === 0 || TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(req.headers.cookie ? { cookies: req.headers.cookie.split(/;\s*/) } : {}),
    headers,
    ...(Object.keys(query).length ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'anonymous',
      apiId: urlId,
      domainName: host,
      domainPrefix: urlId,
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: headers['x-forwarded-for'],
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: !text,
  };
}

function readAll(req: IncomingMessage, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
