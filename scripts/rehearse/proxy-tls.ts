/**
 * The proxies' TLS in the rehearsal: the Broker stack's certificate custom resource run from the
 * template (its inline handler, against the Secrets Manager stand-in, answering a local stand-in of
 * CloudFormation's response URL), and the two checks that TLS is what the proxy speaks: a handshake
 * for the name clients dial that verifies against the CA in the secret, and a plaintext
 * rocketmq-client-nodejs producer that the proxy refuses.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { connect } from 'node:tls';
import { eachLine } from './lines.ts';
import type { Assembly, LocalWorld, Template } from './templates.ts';

const RESOURCE_TYPE = 'Custom::ProxyTlsCertificate';

/**
 * Runs every certificate custom resource of `t` as CloudFormation would on create: the function's
 * inline code (ZipFile) in a child process with the resource's properties. Node.js 24's Lambda runtime
 * ships the AWS SDK; here the repository's install stands in for it (NODE_PATH).
 */
export async function runCertificateResources(options: {
  app: Assembly;
  t: Template;
  world: LocalWorld;
  dir: string;
  repoRoot: string;
  env: Record<string, string>;
  log: (line: string) => void;
}): Promise<Array<{ id: string; ok: boolean; detail: string }>> {
  const { app, t, world } = options;
  const out: Array<{ id: string; ok: boolean; detail: string }> = [];
  for (const [id, r] of app.resources(t, RESOURCE_TYPE)) {
    const token = r.Properties.ServiceToken as { 'Fn::GetAtt': [string, string] };
    const fn = t.Resources[token['Fn::GetAtt'][0]]!;
    const code = (fn.Properties.Code as { ZipFile?: string }).ZipFile;
    if (!code) throw new Error(`${t.stack}/${id}: its handler has no inline code`);
    const properties: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.Properties))
      if (k !== 'ServiceToken') properties[k] = app.resolve(t, v, world);
    const dir = join(options.dir, `cr-${id}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.js'), code);
    const reply = await invoke(
      dir,
      String(fn.Properties.Handler),
      properties,
      { ...options.env, NODE_PATH: resolve(options.repoRoot, 'node_modules') },
      options.log,
    );
    out.push({
      id,
      ok: reply.Status === 'SUCCESS',
      detail: `${reply.Status}: ${reply.Reason} (properties ${Object.keys(properties).join(', ')})`,
    });
  }
  return out;
}

async function invoke(
  dir: string,
  handler: string,
  properties: Record<string, string>,
  env: Record<string, string>,
  log: (l: string) => void,
) {
  let resolveReply!: (r: { Status: string; Reason: string }) => void;
  const replied = new Promise<{ Status: string; Reason: string }>((r) => (resolveReply = r));
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      res.end();
      resolveReply(JSON.parse(body) as { Status: string; Reason: string });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const event = {
      RequestType: 'Create',
      ResponseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
      StackId: 'rehearsal',
      RequestId: 'rehearsal',
      LogicalResourceId: 'rehearsal',
      ResourceProperties: properties,
    };
    const [file, fnName] = handler.split('.');
    const script = `require(${JSON.stringify(join(dir, `${file}.js`))}).${fnName}(${JSON.stringify(event)}).catch((e) => { console.error(e); process.exit(1); });`;
    const child = spawn(process.execPath, ['-e', script], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const s of [child.stdout, child.stderr]) eachLine(s, (line) => log(`[custom resource] ${line.slice(0, 300)}`));
    const exited = new Promise<{ Status: string; Reason: string }>((r) =>
      child.once('exit', (code) => r({ Status: 'FAILED', Reason: `handler exited ${code} without answering` })),
    );
    return await Promise.race([replied, exited]);
  } finally {
    server.close();
  }
}

/** TLS handshake to the proxy for `servername`, verified against `ca` alone (ALPN h2, as gRPC asks). */
export function handshake(
  host: string,
  port: number,
  servername: string,
  ca: string,
): Promise<{ ok: boolean; detail: string }> {
  return new Promise((done) => {
    const socket = connect({ host, port, servername, ca, ALPNProtocols: ['h2'], timeout: 10_000 }, () => {
      const cert = socket.getPeerCertificate();
      done({
        ok: socket.authorized && socket.alpnProtocol === 'h2',
        detail: `${socket.getProtocol()} ALPN ${socket.alpnProtocol}, certificate ${cert.subject?.CN} (${cert.subjectaltname}) issued by ${cert.issuer?.CN}: ${socket.authorized ? 'verified against the CA secret' : socket.authorizationError}`,
      });
      socket.end();
    });
    socket.on('timeout', () => socket.destroy(new Error('timed out')));
    socket.on('error', (e) => done({ ok: false, detail: `TLS handshake failed: ${e.message}` }));
  });
}

/**
 * A plaintext client with valid credentials (none when the deploy has no user for it): rocketmq-client-nodejs
 * without TLS, sending one message. The check passes only when the proxy refuses it.
 */
export async function plaintextRefused(
  endpoints: string,
  topic: string,
  credentials: { accessKey: string; accessSecret: string } | undefined,
): Promise<{ ok: boolean; detail: string }> {
  const { Producer } = await import('rocketmq-client-nodejs');
  const producer = new Producer({
    endpoints,
    namespace: '',
    topic,
    maxAttempts: 1,
    sslEnabled: false,
    sessionCredentials: credentials,
    requestTimeout: 5_000,
  } as ConstructorParameters<typeof Producer>[0]);
  try {
    const attempt = (async () => {
      await producer.startup();
      await producer.send({ topic, liteTopic: 'rehearsal-plaintext', body: Buffer.from('plaintext') } as Parameters<
        typeof producer.send
      >[0]);
    })();
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error('no answer within 30 s')), 30_000),
    );
    await Promise.race([attempt, timeout]);
    return { ok: false, detail: 'a plaintext producer started and sent a message: the proxy accepts plaintext' };
  } catch (err) {
    if (err instanceof Error && err.message === 'no answer within 30 s')
      return { ok: false, detail: 'the plaintext producer got no answer at all (refused, or the proxy is down?)' };
    return {
      ok: true,
      detail: `plaintext producer refused: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200)}`,
    };
  } finally {
    await Promise.race([producer.shutdown().catch(() => undefined), new Promise((r) => setTimeout(r, 5_000))]);
  }
}
