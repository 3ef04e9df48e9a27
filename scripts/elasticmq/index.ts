import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// The Maven and JVM helpers are shared with the RocketMQ launcher.
import { startJava, stopJava, waitUntil } from '../rocketmq/jvm.ts';
import { fetchJars } from '../rocketmq/maven.ts';
import { freePort } from '../rocketmq/ports.ts';

/** 1.6.16+ speaks the SQS JSON protocol that @aws-sdk/client-sqs 3.447+ uses. */
export const ELASTICMQ_VERSION = '1.7.1';

export interface StartElasticMQOptions {
  readonly cacheDir?: string;
  readonly port?: number;
  readonly log?: (line: string) => void;
}

export interface ElasticMQ {
  /** SQS endpoint URL for `new SQSClient({ endpoint })`. */
  readonly endpoint: string;
  readonly region: string;
  readonly version: string;
  stop(): Promise<void>;
}

export async function startElasticMQ(opts: StartElasticMQOptions = {}): Promise<ElasticMQ> {
  const t0 = performance.now();
  const log =
    opts.log ??
    ((line: string) => console.log(`[elasticmq] +${((performance.now() - t0) / 1000).toFixed(1)}s ${line}`));
  const libDir = await fetchJars({
    dir: join(resolve(opts.cacheDir ?? '.cache'), `elasticmq-${ELASTICMQ_VERSION}`),
    artifacts: [{ groupId: 'org.elasticmq', artifactId: 'elasticmq-server_2.13', version: ELASTICMQ_VERSION }],
    log,
  });
  const port = opts.port ?? (await freePort());
  const home = mkdtempSync(join(tmpdir(), 'sluice-elasticmq-'));
  mkdirSync(home, { recursive: true });
  const conf = join(home, 'elasticmq.conf');
  // strict limits: the same message size and attribute rules as real SQS, so a
  // spillover envelope that fits here fits in AWS.
  writeFileSync(
    conf,
    `include classpath("application.conf")
node-address { protocol = http, host = "127.0.0.1", port = ${port}, context-path = "" }
rest-sqs { enabled = true, bind-port = ${port}, bind-hostname = "127.0.0.1", sqs-limits = strict }
rest-stats { enabled = false }
`,
  );
  log(`starting ElasticMQ ${ELASTICMQ_VERSION} on 127.0.0.1:${port}`);
  const proc = startJava({
    name: 'elasticmq',
    libDir,
    mainClass: 'org.elasticmq.server.Main',
    args: [],
    jvmArgs: ['-Xms64m', '-Xmx256m', `-Dconfig.file=${conf}`],
    logFile: join(home, 'elasticmq.out'),
    cwd: home,
  });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntil('ElasticMQ to answer ListQueues', () => answersSqs(endpoint), { timeoutMs: 60_000, proc });
  } catch (err) {
    await stopJava(proc);
    throw err;
  }
  log(`ready in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${endpoint}`);
  return {
    endpoint,
    region: 'elasticmq',
    version: ELASTICMQ_VERSION,
    async stop() {
      await stopJava(proc, 5_000);
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A real SQS JSON-protocol call, so "ready" means the API answers, not just that the port is open. */
async function answersSqs(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' },
      body: '{}',
    });
    return res.ok;
  } catch {
    return false;
  }
}
