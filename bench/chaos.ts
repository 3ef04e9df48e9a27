/**
 * `npm run bench -- chaos [--size small|full] [--faults a,b,...]`: Sluice on real
 * services (redis-server, RocketMQ 5.5, ElasticMQ; one edge and two dispatcher
 * processes; the simulated GPU), under steady load plus a burst, one fault at a
 * time. For each fault: requests accepted, answered exactly once, answered twice,
 * lost, upstream calls per completed request (the fault injector's retriable
 * answers aside), reservoir places held once everything was answered and at rest,
 * and edge 5xx. Progress lines as it runs; one JSON object last.
 *
 * The processes log at info to files named in the progress lines; `CHAOS_LOG_LEVEL=debug`
 * adds the RocketMQ client's own lines (receives, subscription syncs) for a post-mortem.
 *
 * Every fault runs on a flushed Redis, a LITE topic, group and SQS queues of its
 * own and freshly started processes, so nothing one fault leaves behind leaks into
 * the next.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { Redis } from 'ioredis';
import { resultKey } from '../lib/store/keys.js';
import {
  CHAOS_KEY,
  CHAOS_MODEL,
  chaosPolicy,
  chaosQueues,
  countedGpu,
  spawnSluice,
  stopProcess,
  type SluiceProcess,
} from './chaos/services.js';
import { whereLost } from './chaos/lost.js';

export interface ChaosSize {
  /** Steady load, requests per second, for `loadMs`. */
  readonly rate: number;
  readonly loadMs: number;
  /** Requests sent at once, a third into the load. */
  readonly burst: number;
  /** Multiplies the outage lengths named in the issue (30 s, 15 s, 90 s). */
  readonly outageScale: number;
  /**
   * The batch tier's maximum queue wait: a request's deadline and its reservoir place's
   * hold. Longer than the proxy's invisible time (60 s), after which a killed
   * dispatcher's un-acked messages are delivered again.
   */
  readonly maxQueueWaitMs: number;
}

export const SIZES: Readonly<Record<'small' | 'full', ChaosSize>> = {
  small: { rate: 3, loadMs: 20_000, burst: 20, outageScale: 1 / 3, maxQueueWaitMs: 90_000 },
  full: { rate: 6, loadMs: 120_000, burst: 60, outageScale: 1, maxQueueWaitMs: 150_000 },
};

export interface FaultRow {
  readonly fault: string;
  readonly accepted: number;
  readonly refused: number;
  readonly answeredOnce: number;
  readonly answeredTwice: number;
  readonly lost: number;
  readonly completed: number;
  readonly failed: number;
  /** Answers other than completed, by stored status and HTTP status (`expired 504`, `failed 502`): why they failed, not lost. */
  readonly failedBy: Readonly<Record<string, number>>;
  readonly upstreamCallsPerCompleted: number;
  readonly retriableUpstreamFailures: number;
  readonly placesHeldWhenAnswered: number;
  readonly placesHeldAtRest: number;
  readonly edge5xx: number;
  /** Messages SQS moved to the spillover's dead-letter queue on its own (unanswered, no reason). */
  readonly spilloverDeadLetters: number;
  /** Lost requests by where they were at the settle deadline (bench/chaos/lost.ts). */
  readonly lostWhere: Readonly<Record<string, number>>;
  readonly statuses: Record<string, number>;
}

interface World {
  readonly redis: { readonly url: string; readonly port: number; pid(): number | undefined; start(): Promise<void> };
  readonly rocketmq: {
    readonly endpoints: string;
    createLiteTopic(topic: string): Promise<void>;
    createWildcardGroup(group: string, parentTopic: string): Promise<void>;
    killBroker(): Promise<void>;
    restartBroker(): Promise<void>;
  };
  readonly sqs: SQSClient;
  readonly sqsEndpoint: string;
  readonly region: string;
}

interface Phase {
  readonly world: World;
  /** The run's LITE topic; its wildcard group is `${run}-dispatchers`. */
  readonly run: string;
  readonly size: ChaosSize;
  readonly dispatchers: SluiceProcess[];
  restartDispatcher(i: number): Promise<void>;
  readonly gpu: Awaited<ReturnType<typeof countedGpu>>;
  readonly log: (line: string) => void;
}

const DISPATCHER_ENTRY = 'functions/dispatcher/main.ts';
const EDGE_ENTRY = 'bench/chaos/edge-server.ts';
const sec = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * Starts the killed broker and declares the run's topic and group again, as an
 * operator's deployment would (idempotent): the proxy otherwise keeps the topic's
 * message type it saw while the broker was away.
 */
async function restartBroker(p: Phase): Promise<void> {
  await p.world.rocketmq.restartBroker();
  await p.world.rocketmq.createLiteTopic(p.run);
  await p.world.rocketmq.createWildcardGroup(`${p.run}-dispatchers`, p.run);
}

export const FAULTS: Readonly<Record<string, (p: Phase) => Promise<void>>> = {
  async 'dispatcher-kill'(p) {
    // Mid-call: wait for calls at the GPU, then kill -9 one of the two dispatchers.
    for (let i = 0; i < 200 && p.gpu.inFlight() === 0; i++) await wait(25);
    p.log(`fault: kill -9 dispatcher 1 with ${p.gpu.inFlight()} calls at the GPU`);
    p.dispatchers[0]!.kill('SIGKILL');
    await wait(3_000);
    await p.restartDispatcher(0);
    p.log('fault: dispatcher 1 restarted');
  },
  async 'broker-restart'(p) {
    p.log('fault: kill -9 the broker');
    await p.world.rocketmq.killBroker();
    await wait(30_000 * p.size.outageScale);
    await restartBroker(p);
    p.log('fault: broker restarted');
  },
  async 'redis-stop'(p) {
    const pid = p.world.redis.pid()!;
    const ms = 15_000 * p.size.outageScale;
    p.log(`fault: SIGSTOP redis-server for ${sec(ms)}`);
    process.kill(pid, 'SIGSTOP');
    await wait(ms);
    process.kill(pid, 'SIGCONT');
    p.log('fault: SIGCONT redis-server');
  },
  async 'redis-kill'(p) {
    p.log('fault: kill -9 redis-server');
    process.kill(p.world.redis.pid()!, 'SIGKILL');
    await wait(2_000);
    await p.world.redis.start();
    p.log('fault: redis-server restarted (append-only file replayed)');
  },
  async 'broker-down'(p) {
    const ms = 90_000 * p.size.outageScale;
    p.log(`fault: broker down for ${sec(ms)}`);
    await p.world.rocketmq.killBroker();
    await wait(ms);
    await restartBroker(p);
    p.log('fault: broker back');
  },
  async 'upstream-503'(p) {
    p.log('fault: the GPU answers 503 half the time until the load ends');
    p.gpu.gpu.faults.setFailureRate(0.5, 503);
  },
};

async function runFault(
  world: World,
  size: ChaosSize,
  fault: string,
  n: number,
  logDir: string,
  log: (line: string) => void,
): Promise<FaultRow> {
  const run = `chaos-${Date.now().toString(36)}-${n}`;
  const control = new Redis(world.redis.url, { lazyConnect: true, maxRetriesPerRequest: null });
  control.on('error', () => {});
  await control.connect();
  await control.flushall();
  await world.rocketmq.createLiteTopic(run);
  await world.rocketmq.createWildcardGroup(`${run}-dispatchers`, run);
  const queues = await chaosQueues(world.sqs, run);
  const gpu = await countedGpu();
  const policy = chaosPolicy(gpu.url, size.maxQueueWaitMs);
  const env: Record<string, string> = {
    SLUICE_REDIS_URL: world.redis.url,
    SLUICE_ROCKETMQ_ENDPOINTS: world.rocketmq.endpoints,
    SLUICE_ROCKETMQ_TOPIC: run,
    SLUICE_ROCKETMQ_GROUP: `${run}-dispatchers`,
    SLUICE_SPILLOVER_QUEUE_URL: queues.spilloverUrl,
    SLUICE_DLQ_URL: queues.deadLetterUrl,
    SLUICE_SQS_ENDPOINT: world.sqsEndpoint,
    AWS_REGION: world.region,
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    SLUICE_POLICY_JSON: JSON.stringify(policy),
    SLUICE_METRICS_PORT: '0',
    SLUICE_LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'info',
    SLUICE_UPSTREAM_TIMEOUT_MS: '15000',
    SLUICE_DISPATCH_CONCURRENCY: '16',
  };
  const logs = {
    edge: join(logDir, `${run}-edge.log`),
    d1: join(logDir, `${run}-d1.log`),
    d2: join(logDir, `${run}-d2.log`),
  };
  const dispatcherAt = (i: number) =>
    spawnSluice(`dispatcher-${i + 1}`, DISPATCHER_ENTRY, env, /dispatcher consuming/, i === 0 ? logs.d1 : logs.d2);
  const dispatchers = [dispatcherAt(0), dispatcherAt(1)];
  const edge = spawnSluice('edge', EDGE_ENTRY, env, /listening (http:\S+)/, logs.edge);
  const edgeUrl = await edge.ready;
  await Promise.all(dispatchers.map((d) => d.ready));
  // Consumers connect in the background after "consuming".
  await wait(3_000);

  // Answers as they are published: a second publication for one id is a second answer.
  const publications = new Map<string, number>();
  const subscriber = control.duplicate();
  subscriber.on('error', () => {});
  await subscriber.psubscribe(`${resultKey('*')}:ch`);
  subscriber.on('pmessage', (_pattern: string, channel: string) => {
    const id = decodeURIComponent(channel.slice(resultKey('').length, -':ch'.length));
    publications.set(id, (publications.get(id) ?? 0) + 1);
  });

  const statuses: Record<string, number> = {};
  const accepted = new Map<string, string>(); // id -> marker
  let edge5xx = 0;
  let refused = 0;
  let sent = 0;
  async function send(): Promise<void> {
    const marker = `${run}-${sent++}`;
    let status = 'error';
    try {
      const res = await fetch(`${edgeUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${CHAOS_KEY}`, 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify({ model: CHAOS_MODEL, messages: [{ role: 'user', content: marker }], max_tokens: 16 }),
        signal: AbortSignal.timeout(60_000),
      });
      status = String(res.status);
      const body = (await res.json().catch(() => ({}))) as { id?: string };
      if (res.status === 202 && body.id) accepted.set(body.id, marker);
      else refused++;
      if (res.status >= 500) edge5xx++;
    } catch (err) {
      status = err instanceof Error ? err.name : 'error';
      refused++;
    }
    statuses[status] = (statuses[status] ?? 0) + 1;
  }

  const phase: Phase = {
    world,
    run,
    size,
    dispatchers,
    gpu,
    log,
    async restartDispatcher(i) {
      dispatchers[i] = dispatcherAt(i);
      await dispatchers[i]!.ready;
    },
  };
  const started = Date.now();
  const inflight: Promise<void>[] = [];
  const faultRun = wait(size.loadMs / 4).then(() => FAULTS[fault]!(phase));
  let burstSent = false;
  const progress = setInterval(() => {
    const at = sec(Date.now() - started);
    const answered = publications.size;
    log(
      `${fault}: ${at} sent ${sent}, accepted ${accepted.size}, answered ${answered}, calls at the GPU ${gpu.inFlight()}`,
    );
  }, 5_000);
  try {
    for (let i = 0; Date.now() - started < size.loadMs; i++) {
      inflight.push(send());
      if (!burstSent && Date.now() - started >= size.loadMs / 3) {
        burstSent = true;
        for (let b = 0; b < size.burst; b++) inflight.push(send());
      }
      await wait(Math.max(0, started + ((i + 1) * 1000) / size.rate - Date.now()));
    }
    await faultRun;
    gpu.gpu.faults.setFailureRate(0);
    await Promise.all(inflight);

    // Settle: every accepted request answered, or the latest deadline plus an upstream call has passed.
    const settleBy = Date.now() + size.maxQueueWaitMs + 30_000;
    const final = new Map<string, { status: string; httpStatus: number }>();
    while (Date.now() < settleBy) {
      for (const id of accepted.keys()) {
        if (final.has(id)) continue;
        const raw = await control.get(resultKey(id)).catch(() => null);
        const record = raw ? (JSON.parse(raw) as { status: string; httpStatus: number }) : undefined;
        if (record && record.status !== 'queued') final.set(id, record);
      }
      if (final.size === accepted.size) break;
      await wait(1_000);
    }
    // Placed now, at the settle deadline, while the processes still hold what they hold.
    const lostIds = [...accepted.keys()].filter((id) => !final.has(id));
    const lostReport =
      lostIds.length > 0
        ? await whereLost({ ids: lostIds, redis: control, sqs: world.sqs, spilloverUrl: queues.spilloverUrl, logs })
        : undefined;
    for (const line of lostReport?.lines ?? []) log(`${fault}: ${line}`);
    const placesHeldWhenAnswered = await livePlaces(control);
    let placesHeldAtRest = placesHeldWhenAnswered;
    if (placesHeldAtRest > 0) {
      log(`${fault}: ${placesHeldAtRest} reservoir places held once answered; waiting out their hold`);
      await wait(size.maxQueueWaitMs + 1_000);
      placesHeldAtRest = await livePlaces(control);
    }
    // What the client reads: each accepted request once through the edge.
    for (const id of accepted.keys()) {
      const headers = { authorization: `Bearer ${CHAOS_KEY}` };
      const res = await fetch(`${edgeUrl}/v1/requests/${id}`, { headers }).catch(() => undefined);
      if (!res || res.status >= 500) edge5xx++;
      await res?.arrayBuffer();
    }
    const spilloverDead = await world.sqs
      .send(new ReceiveMessageCommand({ QueueUrl: queues.spilloverDeadLetterUrl, MaxNumberOfMessages: 10 }))
      .catch(() => ({ Messages: [] }));

    let completed = 0;
    let failed = 0;
    const failedBy: Record<string, number> = Object.create(null) as Record<string, number>;
    let callsOfCompleted = 0;
    let retriable = 0;
    for (const [id, marker] of accepted) {
      const c = gpu.counts.get(marker);
      retriable += c?.faults ?? 0;
      const r = final.get(id);
      if (r?.status === 'completed') {
        completed++;
        callsOfCompleted += (c?.calls ?? 0) - (c?.faults ?? 0);
      } else if (r) {
        failed++;
        const why = `${r.status} ${r.httpStatus}`;
        failedBy[why] = (failedBy[why] ?? 0) + 1;
      }
    }
    const twice = [...accepted.keys()].filter((id) => (publications.get(id) ?? 0) > 1).length;
    return {
      fault,
      accepted: accepted.size,
      refused,
      answeredOnce: [...accepted.keys()].filter((id) => final.has(id) && (publications.get(id) ?? 1) <= 1).length,
      answeredTwice: twice,
      lost: accepted.size - final.size,
      completed,
      failed,
      failedBy: { ...failedBy },
      upstreamCallsPerCompleted: completed > 0 ? Math.round((callsOfCompleted / completed) * 1000) / 1000 : 0,
      retriableUpstreamFailures: retriable,
      placesHeldWhenAnswered,
      placesHeldAtRest,
      edge5xx,
      spilloverDeadLetters: spilloverDead.Messages?.length ?? 0,
      lostWhere: lostReport?.byPlace ?? {},
      statuses,
    };
  } finally {
    clearInterval(progress);
    await Promise.all([...dispatchers, edge].map((p) => stopProcess(p)));
    subscriber.disconnect();
    control.disconnect();
    await gpu.close();
  }
}

/** Reservoir places not yet lapsed, across every reservoir, on Redis's clock. */
async function livePlaces(redis: Redis): Promise<number> {
  const [s, us] = await redis.time();
  const now = Number(s) * 1000 + Math.floor(Number(us) / 1000);
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', 'sluice:*:res:*', 'COUNT', 1000);
    cursor = next;
    for (const key of keys) total += await redis.zcount(key, `(${now}`, '+inf');
  } while (cursor !== '0');
  return total;
}

export interface ChaosOptions {
  readonly size: ChaosSize;
  readonly faults: readonly string[];
  readonly log: (line: string) => void;
}

export async function runChaos(options: ChaosOptions): Promise<FaultRow[]> {
  const { log } = options;
  const { startRedisServer } = await import('../scripts/redis/server.ts');
  const { startRocketMQ } = await import('../scripts/rocketmq/index.ts');
  const { startElasticMQ } = await import('../scripts/elasticmq/index.ts');
  log('chaos: starting redis-server (append-only), RocketMQ 5.5 and ElasticMQ');
  const appendOnly = ['--appendonly', 'yes', '--appendfsync', 'always'];
  const redis = await startRedisServer({ log: (l) => log(`[redis] ${l}`), extraArgs: appendOnly });
  const closers: Array<() => Promise<void>> = [() => redis.close()];
  try {
    const mq = await startRocketMQ({ log: (l) => log(`[rocketmq] ${l}`) });
    closers.push(() => mq.stop());
    const elasticmq = await startElasticMQ({ log: (l) => log(`[elasticmq] ${l}`) });
    closers.push(() => elasticmq.stop());
    const credentials = { accessKeyId: 'x', secretAccessKey: 'x' };
    const sqs = new SQSClient({ endpoint: elasticmq.endpoint, region: elasticmq.region, credentials });
    const world: World = { redis, rocketmq: mq, sqs, sqsEndpoint: elasticmq.endpoint, region: elasticmq.region };
    const logDir = mkdtempSync(join(tmpdir(), 'sluice-chaos-'));
    log(`chaos: process logs in ${logDir}`);
    const rows: FaultRow[] = [];
    for (const [i, fault] of options.faults.entries()) {
      log(`chaos: fault ${i + 1}/${options.faults.length}: ${fault}`);
      const row = await runFault(world, options.size, fault, i, logDir, log);
      log(`chaos: ${fault}: ${JSON.stringify(row)}`);
      rows.push(row);
    }
    return rows;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

export function chaosTable(rows: readonly FaultRow[]): string {
  const columns: Array<[string, (r: FaultRow) => unknown]> = [
    ['fault', (r) => r.fault],
    ['accepted', (r) => r.accepted],
    ['answered once', (r) => r.answeredOnce],
    ['twice', (r) => r.answeredTwice],
    ['lost', (r) => r.lost],
    ['completed', (r) => r.completed],
    ['failed', (r) => r.failed],
    [
      'failed by',
      (r) =>
        Object.entries(r.failedBy)
          .map(([why, n]) => `${why}: ${n}`)
          .join(', ') || '-',
    ],
    ['calls/completed', (r) => r.upstreamCallsPerCompleted],
    ['retriable 503s', (r) => r.retriableUpstreamFailures],
    ['places when answered', (r) => r.placesHeldWhenAnswered],
    ['places at rest', (r) => r.placesHeldAtRest],
    ['edge 5xx', (r) => r.edge5xx],
    ['spillover DLQ', (r) => r.spilloverDeadLetters],
    [
      'lost where',
      (r) =>
        Object.entries(r.lostWhere)
          .map(([where, n]) => `${where}: ${n}`)
          .join(', ') || '-',
    ],
  ];
  const head = columns.map(([name]) => name);
  const lines = rows.map((r) => columns.map(([, cell]) => String(cell(r))));
  return [head, head.map(() => '---'), ...lines].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** The command line: `npm run bench -- chaos [--size small|full] [--faults a,b]` (bench/chaos/cli.ts runs it). */
export async function chaosMain(argv: readonly string[]): Promise<void> {
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  };
  const sizeName = flag('size') ?? 'small';
  if (sizeName !== 'small' && sizeName !== 'full') throw new Error('--size small|full');
  const faults = (flag('faults') ?? Object.keys(FAULTS).join(',')).split(',').filter(Boolean);
  const unknown = faults.filter((f) => !Object.hasOwn(FAULTS, f));
  if (unknown.length > 0)
    throw new Error(`unknown fault ${unknown.join(', ')}; known: ${Object.keys(FAULTS).join(', ')}`);
  const rows = await runChaos({ size: SIZES[sizeName], faults, log: (line) => console.log(line) });
  const report = { bench: 'chaos', size: sizeName, faults: rows };
  const out = resolve(flag('out') ?? 'bench/out');
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'chaos.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(chaosTable(rows));
  console.log(JSON.stringify(report));
}
