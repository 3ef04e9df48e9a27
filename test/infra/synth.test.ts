/**
 * The deploy path as a fresh clone sees it, without AWS: `npx cdk synth` in a child
 * process (in a network namespace with no network when `unshare` allows it), cfn-lint
 * on every template it wrote, and the edge bundle CDK built, loaded and asked one
 * function-URL request.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './helpers.ts';

const OUT = path.join(REPO_ROOT, '.cache', 'infra-synth', `cdk.out.${process.pid}`);
const STACKS = ['Network', 'Config', 'Queues', 'Broker', 'Dispatchers', 'Edge', 'Observability'].map(
  (n) => `Sluice-dev-${n}`,
);

/** The environment of a machine with no AWS credentials and no way to reach AWS. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AWS_') && !k.startsWith('CDK_')) env[k] = v;
  return {
    ...env,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_CONFIG_FILE: '/dev/null',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    CDK_DISABLE_VERSION_CHECK: '1',
  };
}

/** `unshare -n` (a fresh network namespace: not even a route out) when this machine allows it. */
function isolation(): string[] {
  const probe = spawnSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
  return probe.status === 0 ? ['unshare', '-n'] : [];
}

let synth: { status: number | null; ms: number; output: string; isolated: boolean };
beforeAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(path.dirname(OUT), { recursive: true });
  const wrap = isolation();
  const cmd = [...wrap, 'npx', 'cdk', 'synth', '--quiet', '--no-notices', '--ci', '-o', OUT];
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), { cwd: REPO_ROOT, env: offlineEnv(), encoding: 'utf8', timeout: 240_000 });
  synth = {
    status: r.status,
    ms: performance.now() - t0,
    output: `${r.stdout}\n${r.stderr}`,
    isolated: wrap.length > 0,
  };
  console.log(
    `npx cdk synth --quiet${synth.isolated ? ' (inside a network namespace with no network)' : ''}: exit ${r.status} in ${(synth.ms / 1000).toFixed(1)} s`,
  );
}, 300_000);
const cleanups: Array<() => void> = [];
afterAll(() => {
  rmSync(OUT, { recursive: true, force: true });
  for (const c of cleanups) c();
});

describe('cdk synth from the command line, offline', () => {
  it('synthesizes every stack with no AWS credentials or network', () => {
    expect(synth.status, synth.output).toBe(0);
    const templates = readdirSync(OUT).filter((f) => f.endsWith('.template.json'));
    expect(templates.sort()).toEqual(STACKS.map((s) => `${s}.template.json`).sort());
    // No context lookup was needed (a lookup would have been recorded as missing context).
    const manifest = JSON.parse(readFileSync(path.join(OUT, 'manifest.json'), 'utf8')) as { missing?: unknown[] };
    expect(manifest.missing ?? []).toEqual([]);
  });
});

describe('cfn-lint', () => {
  it('passes on every synthesized template (installing cfn-lint if missing)', () => {
    const templates = STACKS.map((s) => path.join(OUT, `${s}.template.json`));
    const r = spawnSync('bash', [path.join(REPO_ROOT, 'scripts/infra/cfn-lint.sh'), ...templates], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 540_000,
    });
    console.log(`cfn-lint on ${templates.length} templates: exit ${r.status}\n${r.stdout}${r.stderr}`.trim());
    expect(r.error, 'cfn-lint did not run').toBeUndefined();
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  }, 600_000);
});

describe('edge bundle', () => {
  it('loads from an empty directory (the asset alone, as Lambda runs it) and answers a function URL request', async () => {
    // The function's code asset, as CDK bundled it with esbuild.
    const template = JSON.parse(readFileSync(path.join(OUT, 'Sluice-dev-Edge.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: { Description?: string; Code?: { S3Key?: string } } }>;
    };
    const fn = Object.values(template.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Description?.includes(' edge '),
    )!;
    const hash = fn.Properties.Code!.S3Key!.replace(/\.zip$/, '');
    // Alone in a directory with no node_modules above it: a package left external fails here.
    const taskRoot = mkdtempSync(path.join(os.tmpdir(), 'sluice-edge-task-'));
    cleanups.push(() => rmSync(taskRoot, { recursive: true, force: true }));
    copyFileSync(path.join(OUT, `asset.${hash}`, 'index.mjs'), path.join(taskRoot, 'index.mjs'));
    const bundle = path.join(taskRoot, 'index.mjs');
    const bytes = readFileSync(bundle);
    console.log(
      `edge bundle: ${(bytes.length / 1024).toFixed(1)} KiB (${(gzipSync(bytes).length / 1024).toFixed(1)} KiB gzipped) at ${path.relative(REPO_ROOT, bundle)}`,
    );
    expect(statSync(bundle).size).toBeLessThan(10 * 1024 * 1024);

    const key = 'sk-bundle-test';
    process.env.SLUICE_STAGE = 'bundle-test';
    process.env.SLUICE_LOG_LEVEL = 'silent';
    process.env.SLUICE_POLICY_JSON = JSON.stringify({
      tiers: { realtime: { weight: 6, share: 0.6, overQuota: 'reject', maxQueueWaitMs: 10_000 } },
      models: { 'sim-llm': { slots: 4, upstreams: ['http://127.0.0.1:9/v1'] } },
      tenants: { acme: {} },
      accounts: {
        'acme-svc': { tenant: 'acme', tier: 'realtime', keyHashes: [createHash('sha256').update(key).digest('hex')] },
      },
      defaults: {
        accountModel: { rpm: 600, tpm: 200_000, rate: 10, burst: 50, reservoir: 1_000 },
        tenantModel: { rpm: 3_000, tpm: 1_000_000 },
        tenant: { rpm: 6_000, tpm: 2_000_000 },
      },
    });
    const lambdaRuntime = installStreamingRuntimeShim();
    const mod = (await import(pathToFileURL(bundle).href)) as { handler: StreamingHandler };
    expect(typeof mod.handler).toBe('function');

    const body = JSON.stringify({ model: 'sim-llm', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
    const res = await lambdaRuntime.invoke(
      mod.handler,
      functionUrlEvent('POST', '/v1/chat/completions', body, {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        prefer: 'respond-async',
      }),
    );
    expect(res.statusCode, res.body).toBe(202);
    const json = JSON.parse(res.body) as { id: string; status: string; status_url: string };
    expect(json.status).toBe('queued');
    expect(json.status_url).toContain(`/v1/requests/${json.id}`);
    // Admission ran on the embedded store: the window headers count this request.
    expect(res.headers['x-ratelimit-remaining-requests']).toBeDefined();

    const models = await lambdaRuntime.invoke(
      mod.handler,
      functionUrlEvent('GET', '/v1/models', undefined, { authorization: `Bearer ${key}` }),
    );
    expect(models.statusCode).toBe(200);
    expect(JSON.parse(models.body)).toMatchObject({ object: 'list', data: [{ id: 'sim-llm' }] });
  }, 60_000);
});

// --- a stand-in for the pieces of the Lambda Node.js runtime that response streaming uses.

type StreamingHandler = (event: unknown, context: unknown) => Promise<void>;
interface StreamedResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * `awslambda.streamifyResponse` and `awslambda.HttpResponseStream.from`, as the managed
 * runtime provides them: the handler gets a writable stream; `from` writes the JSON
 * prelude and eight NUL bytes before the body, which is how the function URL receives it.
 */
function installStreamingRuntimeShim() {
  const STREAM = Symbol('streaming');
  (globalThis as Record<string, unknown>).awslambda = {
    streamifyResponse(fn: (event: unknown, stream: PassThrough, context: unknown) => Promise<void>) {
      return Object.assign(fn, { [STREAM]: true });
    },
    HttpResponseStream: {
      from(stream: PassThrough, prelude: unknown) {
        stream.write(JSON.stringify(prelude));
        stream.write(Buffer.alloc(8));
        return stream;
      },
    },
  };
  return {
    async invoke(handler: StreamingHandler, event: unknown): Promise<StreamedResponse> {
      expect((handler as unknown as Record<symbol, unknown>)[STREAM], 'handler is not streamified').toBe(true);
      const stream = new PassThrough();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(Buffer.from(c)));
      const ended = new Promise((resolve) => stream.on('end', resolve));
      await (handler as unknown as (e: unknown, s: PassThrough, c: unknown) => Promise<void>)(event, stream, {
        awsRequestId: 'test',
      });
      await ended;
      const all = Buffer.concat(chunks);
      const sep = all.indexOf(Buffer.alloc(8));
      if (sep < 0) throw new Error(`no response prelude in: ${all.toString()}`);
      const prelude = JSON.parse(all.subarray(0, sep).toString()) as {
        statusCode: number;
        headers: Record<string, string>;
      };
      return { statusCode: prelude.statusCode, headers: prelude.headers, body: all.subarray(sep + 8).toString() };
    },
  };
}

/** A Lambda function URL event (payload format 2.0). */
function functionUrlEvent(method: string, rawPath: string, body: string | undefined, headers: Record<string, string>) {
  const host = 'abcdefghijklmnopqrstuvwxyz012345.lambda-url.eu-west-1.on.aws';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: { host, 'x-forwarded-proto': 'https', 'user-agent': 'sluice-infra-test', ...headers },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'abcdefghijklmnopqrstuvwxyz012345',
      domainName: host,
      domainPrefix: 'abcdefghijklmnopqrstuvwxyz012345',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'sluice-infra-test' },
      requestId: 'test-request',
      routeKey: '$default',
      stage: '$default',
      time: '29/Nov/2026:17:00:00 +0000',
      timeEpoch: 1_795_971_600_000,
    },
    ...(body !== undefined ? { body, isBase64Encoded: false } : { isBase64Encoded: false }),
  };
}
