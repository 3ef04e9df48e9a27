/**
 * The chaos bench's world: redis-server (append-only, as a production Redis keeps
 * what it acknowledged), RocketMQ 5.5, ElasticMQ, the simulated GPU behind a
 * counter, and Sluice's processes (one edge, two dispatchers) spawned with the
 * deployed entry points' wiring.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve, type ServerType } from '@hono/node-server';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { createGpuSim, type GpuSim } from '../../functions/gpu-sim/app.js';
import { systemClock } from '../../functions/runtime/system-clock.js';
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { parsePolicy, type Policy } from '../../lib/policy/schema.js';

export const CHAOS_KEY = 'sk-sluice-chaos';
export const CHAOS_MODEL = 'sim-llm';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One batch account with room to spare: the faults, not the limits, decide what happens. */
export function chaosPolicy(gpuBaseUrl: string, maxQueueWaitMs: number): Policy {
  return parsePolicy({
    tiers: { ...defaultTiers, batch: { ...defaultTiers.batch!, maxQueueWaitMs } },
    defaults: { ...defaultLimits, accountModel: { rpm: 100_000, tpm: 100_000_000, rate: 20, burst: 40 } },
    models: { [CHAOS_MODEL]: { slots: 8, upstreams: [gpuBaseUrl], defaultMaxTokens: 16 } },
    tenants: { chaos: {} },
    accounts: { 'chaos-app': { tenant: 'chaos', tier: 'batch', keyHashes: [hashApiKey(CHAOS_KEY)] } },
  });
}

export interface CallCount {
  calls: number;
  /** Answered by the fault injector (a retriable upstream failure). */
  faults: number;
  ok: number;
}

/** The simulated GPU on a port, counting calls per request by the marker the client put in its prompt. */
export interface CountedGpu {
  readonly gpu: GpuSim;
  readonly url: string;
  /** Per prompt marker. */
  readonly counts: Map<string, CallCount>;
  inFlight(): number;
  close(): Promise<void>;
}

export async function countedGpu(): Promise<CountedGpu> {
  const gpu = createGpuSim({
    clock: systemClock,
    models: [CHAOS_MODEL],
    slots: 8,
    queueLimit: 64,
    minOutputTokens: 8,
    maxOutputTokens: 16,
  });
  const counts = new Map<string, CallCount>();
  let inFlight = 0;
  const fetch = async (req: Request): Promise<Response> => {
    type Chat = { messages?: Array<{ content?: unknown }> } | undefined;
    const body = (await req
      .clone()
      .json()
      .catch(() => undefined)) as Chat;
    const marker = String(body?.messages?.[0]?.content ?? '');
    const c = counts.get(marker) ?? { calls: 0, faults: 0, ok: 0 };
    counts.set(marker, c);
    c.calls++;
    inFlight++;
    try {
      const res = await gpu.app.fetch(req);
      if (res.ok) c.ok++;
      else c.faults++;
      return res;
    } finally {
      inFlight--;
    }
  };
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  return {
    gpu,
    url: `http://127.0.0.1:${port}/v1`,
    counts,
    inFlight: () => inFlight,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The spillover FIFO queue with the stack's redrive policy (infra/stacks/queues-stack.ts: maxReceiveCount 5), and the DLQs. */
export interface ChaosQueues {
  readonly spilloverUrl: string;
  /** Where SQS itself moves a spilled message after maxReceiveCount receives: unanswered, no reason. */
  readonly spilloverDeadLetterUrl: string;
  /** Sluice's own dead letters, each with its reason. */
  readonly deadLetterUrl: string;
}

export async function chaosQueues(sqs: SQSClient, prefix: string): Promise<ChaosQueues> {
  const fifo = { FifoQueue: 'true' };
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-dead-letters.fifo`, Attributes: fifo }));
  const attributes = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl!, AttributeNames: ['QueueArn'] }),
  );
  const arn = attributes.Attributes!.QueueArn!;
  const spill = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${prefix}-spillover.fifo`,
      Attributes: {
        FifoQueue: 'true',
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: 5 }),
      },
    }),
  );
  // Sluice's own dead letters (with reasons) go to a standard queue, as in the stack.
  const own = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-sluice-dead-letters` }));
  return { spilloverUrl: spill.QueueUrl!, spilloverDeadLetterUrl: dlq.QueueUrl!, deadLetterUrl: own.QueueUrl! };
}

export interface SluiceProcess {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the first stdout line matching, or rejects when the process exits first. */
  readonly ready: Promise<string>;
  kill(signal: NodeJS.Signals): void;
  exited(): Promise<void>;
}

/**
 * Spawns a Sluice entry point (TypeScript through tsx) with the given environment;
 * its stdout and stderr (pino) go to `logFile`. Ready once a line matches `readyLine`.
 */
export function spawnSluice(
  name: string,
  entry: string,
  env: Record<string, string>,
  readyLine: RegExp,
  logFile: string,
): SluiceProcess {
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<string>((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      out.write(chunk);
      buffer += chunk.toString('utf8');
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const m = readyLine.exec(buffer.slice(0, i));
        buffer = buffer.slice(i + 1);
        if (m) resolve(m[1] ?? m[0]);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => {
      out.end();
      reject(new Error(`${name} exited (code ${code}, signal ${signal}) before it was ready; see ${logFile}`));
    });
  });
  ready.catch(() => undefined);
  return {
    name,
    child,
    ready,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    exited: () => exit,
  };
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
export async function stopProcess(p: SluiceProcess, graceMs = 5_000): Promise<void> {
  p.kill('SIGTERM');
  const timer = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await p.exited();
  clearTimeout(timer);
}
