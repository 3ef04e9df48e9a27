/**
 * Issue 12's closed loop, on the embedded engine and on RocketMQ 5.5 side by side:
 *   A. one tenant (one account), N clients, each sending a 1-token chat completion and the
 *      next once it is answered: req/s and latency, real ÷ embedded (target ≥ 80 %);
 *   B. 32 tenants (one account and LiteTopic each) × 1 client, same loop: requests that
 *      took ≥ 1 s and 504s (target 0 and 0 on real).
 * Both engines are the local Sluice (startLocalSluice, wired like the deployed processes)
 * on the wall clock, with an in-process store; the policy and the simulated GPU never
 * bind, so what is measured is the path through edge, queue and dispatcher.
 *   npm run bench -- closed-loop [--engine embedded|real|both] [--clients 8] [--tenants 32]
 *                                [--seconds 10] [--warmup 3]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { startLocalSluice, type LocalSluice, type LocalSluiceOptions } from '../functions/local/sluice.js';
import { systemClock } from '../functions/runtime/system-clock.js';
import { defaultTiers } from '../lib/policy/defaults.js';
import { hashApiKey } from '../lib/policy/resolve.js';
import { parsePolicy } from '../lib/policy/schema.js';
import type { Logger } from '../lib/telemetry/log.js';
import { startRocketMQ, type RocketMQ } from '../scripts/rocketmq/index.js';
import {
  loopTable,
  runClosedLoop,
  summarize,
  tailVerdict,
  throughputVerdict,
  type Answer,
  type LoopRow,
  type LoopSummary,
} from './lib/closed-loop.js';
import { renderTable } from './lib/tables.js';

type Engine = 'embedded' | 'real';
type CaseName = 'A' | 'B';

const USAGE = 'usage: npm run bench -- closed-loop [--engine embedded|real|both] [--clients 8] [--tenants 32] [--seconds 10] [--warmup 3] [--receivers N]';

function readOptions() {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'both' },
      clients: { type: 'string', default: '8' },
      tenants: { type: 'string', default: '32' },
      seconds: { type: 'string', default: '10' },
      /** Not counted: first connections, and a fresh consumer's first deliveries on the broker. */
      warmup: { type: 'string', default: '3' },
      /** Real engine: LitePushConsumers per dispatcher (default: the deployed SLUICE_ROCKETMQ_RECEIVERS). */
      receivers: { type: 'string' },
    },
  });
  const positiveInt = (name: string, v: string) => {
    if (!/^[1-9]\d*$/.test(v)) throw new Error(`--${name} must be a positive integer, got ${v}`);
    return Number(v);
  };
  if (!['embedded', 'real', 'both'].includes(values.engine)) throw new Error(`--engine must be embedded, real or both, got ${values.engine}`);
  if (!/^\d+$/.test(values.warmup)) throw new Error(`--warmup must be a whole number of seconds, got ${values.warmup}`);
  return {
    engines: (values.engine === 'both' ? ['embedded', 'real'] : [values.engine]) as Engine[],
    clients: positiveInt('clients', values.clients),
    tenants: positiveInt('tenants', values.tenants),
    seconds: positiveInt('seconds', values.seconds),
    warmupSeconds: Number(values.warmup),
    receivers: values.receivers === undefined ? undefined : positiveInt('receivers', values.receivers),
  };
}

let options: ReturnType<typeof readOptions>;
try {
  options = readOptions();
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}\n`);
  process.exit(2);
}
const { engines: ENGINES, clients: CLIENTS, tenants: TENANTS, seconds: SECONDS, warmupSeconds: WARMUP_S } = options;

const t0 = performance.now();
const log = (line: string) => process.stderr.write(`[closed-loop] +${((performance.now() - t0) / 1000).toFixed(1)}s ${line}\n`);

/** Sluice's own warnings and errors, the first few only: a failing run would otherwise bury the tables. */
function stderrLogger(): Logger {
  let lines = 0;
  const write = (level: string) => (obj: object, msg?: string) => {
    if (++lines <= 20) process.stderr.write(`[sluice ${level}] ${msg ?? ''} ${JSON.stringify(obj)}\n`);
    else if (lines === 21) process.stderr.write('[sluice] further warnings and errors not shown\n');
  };
  return { debug() {}, info() {}, warn: write('warn'), error: write('error') };
}

const MODEL = 'm';
const keyOf = (tenant: number) => `sk-closed-loop-${tenant}`;
/** Far above anything a run on this machine can send, so no limit, pace or reservoir ever binds. */
const NEVER = { rpm: 100_000_000, tpm: 1_000_000_000 };

function policy(tenants: number) {
  return (gpuBaseUrl: string) =>
    parsePolicy({
      tiers: defaultTiers,
      defaults: { accountModel: { ...NEVER, rate: 1_000_000, burst: 1_000_000 }, tenantModel: NEVER, tenant: NEVER },
      models: { [MODEL]: { slots: 256, upstreams: [gpuBaseUrl], defaultMaxTokens: 1 } },
      tenants: Object.fromEntries(Array.from({ length: tenants }, (_, t) => [`t${t}`, {}])),
      accounts: Object.fromEntries(
        Array.from({ length: tenants }, (_, t) => [`a${t}`, { tenant: `t${t}`, tier: 'realtime', keyHashes: [hashApiKey(keyOf(t))] }]),
      ),
    });
}

/** 256 slots answering a 1-token completion in about a millisecond: the GPU is never what the loop waits on. */
const GPU = { models: [MODEL], slots: 256, queueLimit: null, baseTokenMs: 1, prefillMsPerKToken: 1, contentionFactor: 0, minOutputTokens: 1, maxOutputTokens: 1 };

const CASES: Record<CaseName, { tenants: number; clientsPerTenant: number; what: string }> = {
  A: { tenants: 1, clientsPerTenant: CLIENTS, what: `1 tenant × ${CLIENTS} clients` },
  B: { tenants: TENANTS, clientsPerTenant: 1, what: `${TENANTS} tenants × 1 client` },
};

async function measure(engine: Engine, name: CaseName, mq: RocketMQ | undefined): Promise<LoopSummary> {
  const c = CASES[name];
  let rocketmq: LocalSluiceOptions['rocketmq'];
  if (mq) {
    // A topic and group of its own per case: what one case leaves on the broker is never delivered to the next.
    const id = randomUUID().slice(0, 8);
    rocketmq = { endpoints: mq.endpoints, parentTopic: `closed-loop-${id}`, consumerGroup: `closed-loop-g-${id}`, ...(options.receivers ? { receivers: options.receivers } : {}) };
    await mq.createLiteTopic(rocketmq.parentTopic!);
    await mq.createWildcardGroup(rocketmq.consumerGroup!, rocketmq.parentTopic!, { orderly: true });
  }
  const sluice: LocalSluice = await startLocalSluice({
    clock: systemClock,
    log: stderrLogger(),
    port: 0,
    gpu: GPU,
    policy: policy(c.tenants),
    drainMs: 2_000,
    ...(rocketmq ? { rocketmq } : {}),
  });
  const clients = c.tenants * c.clientsPerTenant;
  const agent = new Agent({ connections: clients, keepAliveTimeout: 30_000, headersTimeout: 60_000, bodyTimeout: 60_000 });
  const url = `${sluice.url}/v1/chat/completions`;
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });
  const send = async (client: number): Promise<Answer> => {
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${keyOf(client % c.tenants)}` },
      body,
    });
    await res.body.text();
    return res.statusCode;
  };
  try {
    log(`${engine}, case ${name} (${c.what}): ${WARMUP_S} s warm-up, then ${SECONDS} s measured`);
    const run = await runClosedLoop(send, { clients, durationMs: SECONDS * 1000, warmupMs: WARMUP_S * 1000, now: () => performance.now() });
    const s = summarize(run);
    log(`${engine}, case ${name}: ${s.requests} requests, ${s.reqPerSec} req/s answered 200`);
    return s;
  } finally {
    await agent.close();
    await sluice.close();
  }
}

const results: Record<CaseName, Partial<Record<Engine, LoopSummary>>> = { A: {}, B: {} };
let rocketmqVersion: string | undefined;

async function measureAll(): Promise<void> {
  if (ENGINES.includes('embedded')) {
    for (const name of ['A', 'B'] as const) results[name].embedded = await measure('embedded', name, undefined);
  }
  if (!ENGINES.includes('real')) return;
  log('starting RocketMQ 5.5 (namesrv, broker, proxy; this takes about a minute)');
  const mq = await startRocketMQ({ log: (line) => log(`rocketmq: ${line}`) });
  rocketmqVersion = mq.version;
  try {
    log(`RocketMQ ${mq.version} up, proxy at ${mq.endpoints}`);
    for (const name of ['A', 'B'] as const) results[name].real = await measure('real', name, mq);
  } finally {
    log('stopping RocketMQ');
    await mq.stop().catch((error: unknown) => log(`could not stop RocketMQ: ${String(error)}`));
  }
}

try {
  // Everything is stopped before the figures are printed, so the JSON line stays the last one of the log.
  // A run that failed half way still prints what it measured.
  await measureAll().catch((error: unknown) => {
    process.stderr.write(`closed-loop bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
  const rows: LoopRow[] = [];
  for (const name of ['A', 'B'] as const) {
    for (const engine of ENGINES) {
      const summary = results[name][engine];
      if (summary) rows.push({ label: `${name}: ${CASES[name].what}`, engine, clients: CASES[name].tenants * CASES[name].clientsPerTenant, summary });
    }
  }
  const a = throughputVerdict(`Case A (${CASES.A.what})`, results.A.embedded, results.A.real);
  const b = tailVerdict(`Case B (${CASES.B.what})`, results.B.real);
  const title =
    `closed loop, 1-token chat completions, ${SECONDS} s measured after ${WARMUP_S} s warm-up; local Sluice, in-process store, ` +
    'wall clock; model of 256 slots, no limit binds; simulated GPU of 256 slots at 1 ms per token';
  process.stdout.write(`${renderTable(loopTable(title, rows))}\n\n${a.line}\n${b.line}\n`);
  const figures = (s: LoopSummary | undefined) =>
    s && { reqPerSec: s.reqPerSec, p50Ms: s.latencyMs.p50, p99Ms: s.latencyMs.p99, requests: s.requests, over1s: s.slow, expired504: s.expired, statuses: s.statuses };
  process.stdout.write(
    `${JSON.stringify({
      bench: 'closed-loop',
      engines: ENGINES,
      seconds: SECONDS,
      warmupSeconds: WARMUP_S,
      ...(rocketmqVersion ? { rocketmq: rocketmqVersion } : {}),
      caseA: { clients: CLIENTS, embedded: figures(results.A.embedded), real: figures(results.A.real), ratio: a.ratio, pass: a.pass },
      caseB: { tenants: TENANTS, embedded: figures(results.B.embedded), real: figures(results.B.real), pass: b.pass },
    })}\n`,
  );
} finally {
  // The broker client's sockets and timers would keep the process alive after the run.
  process.exit();
}
