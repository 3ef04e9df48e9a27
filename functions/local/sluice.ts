/**
 * Sluice in one process: the simulated GPU endpoint, the edge, the embedded engine
 * and store, and a dispatcher running the Suspend loop. `npm start` and the
 * end-to-end tests both use it. Its parts and its dispatcher are wired as the
 * deployed processes wire theirs (functions/runtime/parts.ts, dispatching.ts);
 * only the options differ.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { sleep, type Clock } from '../../lib/clock/clock.js';
import { createDrain, type DrainOutcome } from '../../lib/dispatch/drain.js';
import type { DispatcherOptions } from '../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../lib/dispatch-events.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import type { Policy, PolicyInput } from '../../lib/policy/schema.js';
import { existsSync } from 'node:fs';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { memorySource, type PolicySource } from '../../lib/policy/source.js';
import { fileSource } from '../../lib/policy/sources/file.js';
import type { DeadLetter, LiteQueue } from '../../lib/queue/types.js';
import type { RateStore } from '../../lib/store/types.js';
import type { Logger } from '../../lib/telemetry/log.js';
import { createPrometheusSink } from '../../lib/telemetry/prometheus.js';
import { createTelemetry, type Telemetry } from '../../lib/telemetry/telemetry.js';
import { createUpstreamClient } from '../../lib/upstream/client.js';
import { createEdgeFromParts } from '../edge/from-parts.js';
import { createGpuSim, type GpuSim, type GpuSimOptions } from '../gpu-sim/app.js';
import type { EdgeOptions } from '../edge/deps.js';
import type { Hono } from 'hono';
import { readConfig } from '../runtime/config.js';
import { startDispatching } from '../runtime/dispatching.js';
import { createParts } from '../runtime/parts.js';
import { demoPolicy } from './demo-policy.js';

export interface LocalSluiceOptions {
  readonly clock: Clock;
  readonly log: Logger;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Policy to serve; default: the demo policy pointed at the built-in GPU simulator. */
  readonly policy?: (gpuBaseUrl: string) => Policy | PolicyInput;
  /**
   * A YAML or JSON policy file, reloaded on change and written by the admin API.
   * Created from `policy` when it does not exist yet.
   */
  readonly policyFile?: string;
  /** Enables the admin API (/admin/v1) with this key. */
  readonly adminKey?: string;
  /** Port of the built-in GPU simulator; 0 picks a free one. */
  readonly gpuPort?: number;
  readonly gpu?: Omit<GpuSimOptions, 'clock'>;
  /** Dispatcher workers (concurrent deliveries). */
  readonly concurrency?: number;
  readonly edge?: EdgeOptions;
  readonly dispatcher?: DispatcherOptions;
  /** Run on a RocketMQ 5.5 proxy instead of the embedded engine. */
  readonly rocketmq?: {
    readonly endpoints: string;
    readonly parentTopic?: string;
    readonly consumerGroup?: string;
    /** Physical LiteTopics per LiteTopic, as the deployed processes shard them (default: theirs). */
    readonly shards?: number;
    /** LitePushConsumers, each with its own long poll (default: the deployed processes'). */
    readonly receivers?: number;
  };
  /** Messages of one LiteTopic dispatched at once (default 32). */
  readonly inFlightPerLiteTopic?: number;
  /** A shared store instead of the embedded one (e.g. Redis behind the guarded store). */
  readonly store?: RateStore;
  /** On close, how long queued and running work may go on before it is cut and its clients answered (default 30 s). */
  readonly drainMs?: number;
  /** Sees every dispatcher event after telemetry has: a bench follows requests through the queue with it. */
  readonly onDispatch?: (event: DispatchEvent) => void;
}

export interface LocalSluice {
  readonly url: string;
  /** The edge app itself, for `app.request` in tests. */
  readonly app: Hono;
  readonly gpu: GpuSim;
  /** The policy in force now. */
  policy(): Policy;
  readonly gpuUrl: string;
  readonly queue: LiteQueue;
  /** Metrics, alerts and the live view behind /dashboard and /metrics. */
  readonly telemetry: Telemetry;
  /**
   * Stops taking requests, lets queued and running work finish within the drain
   * time, answers clients still waiting (503 `shutting_down`), then stops everything.
   */
  close(): Promise<DrainOutcome>;
}

function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  host: string,
  port: number,
): Promise<{ server: ServerType; url: string }> {
  return new Promise((resolve) => {
    const server = serve({ fetch, hostname: host, port }, (info: AddressInfo) =>
      resolve({ server, url: `http://${host}:${info.port}` }),
    );
  });
}

function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function closeConnections(server: ServerType): void {
  if ('closeIdleConnections' in server) server.closeIdleConnections();
  // Whatever is still open after the clients were answered is cut.
  if ('closeAllConnections' in server) setTimeout(() => server.closeAllConnections(), 1_000).unref();
}

/** Resolves once `idle()` holds, or when `stop` aborts. */
async function untilIdle(clock: Clock, idle: () => boolean, stop: AbortSignal): Promise<void> {
  while (!stop.aborted && !idle()) await sleep(clock, 50, stop).catch(() => undefined);
}

export async function startLocalSluice(options: LocalSluiceOptions): Promise<LocalSluice> {
  const { clock, log } = options;
  const host = options.host ?? '127.0.0.1';
  const gpu = createGpuSim({ models: ['sim-llm'], ...options.gpu, clock });
  const gpuServer = await listen(gpu.app.fetch, host, options.gpuPort ?? 0);
  const gpuBaseUrl = `${gpuServer.url}/v1`;
  const initial = (options.policy ?? ((url: string) => demoPolicy([url])))(gpuBaseUrl);
  let source: PolicySource;
  if (options.policyFile) {
    if (!existsSync(options.policyFile)) await fileSource(options.policyFile).save(initial);
    source = fileSource(options.policyFile);
  } else {
    source = memorySource(initial);
  }
  // The deployed processes' configuration, with what differs here as its values.
  const config = readConfig({
    SLUICE_ROCKETMQ_ENDPOINTS: options.rocketmq?.endpoints,
    SLUICE_ROCKETMQ_TOPIC: options.rocketmq?.parentTopic,
    SLUICE_ROCKETMQ_GROUP: options.rocketmq?.consumerGroup,
    SLUICE_ROCKETMQ_LITETOPIC_SHARDS:
      options.rocketmq?.shards === undefined ? undefined : String(options.rocketmq.shards),
    SLUICE_ROCKETMQ_RECEIVERS:
      options.rocketmq?.receivers === undefined ? undefined : String(options.rocketmq.receivers),
    // Releases leave a LiteTopic in order, but run side by side: one account's requests
    // must not wait for each other's generations (the pacer and the gate set the rate).
    SLUICE_INFLIGHT_PER_LITETOPIC: String(options.inFlightPerLiteTopic ?? 32),
  });
  let settle: (d: DeadLetter) => Promise<void> = async () => {};
  const parts = await createParts(config, clock, log, {
    role: 'edge',
    policySource: source,
    ...(options.store ? { store: options.store } : {}),
    settleDeadLetter: (d) =>
      settle(d).catch((error: unknown) => log.error({ err: String(error) }, 'could not settle a dead letter')),
  });
  const { queue } = parts;
  const policy = parts.policy;
  const prometheus = createPrometheusSink();
  const telemetry = createTelemetry({ clock, log, policy, sinks: [prometheus], depth: parts.depth });
  /** The embedded queue dies with the process, so close() serves what it holds first; a broker keeps its messages. */
  const idle =
    queue instanceof EmbeddedLiteQueue ? () => queue.stats().queued === 0 && queue.stats().inFlight === 0 : undefined;
  const drain = createDrain({ clock, drainMs: options.drainMs ?? 30_000 });
  const stopTaking = new AbortController();
  const stopWaiting = new AbortController();
  const rawUpstream = createUpstreamClient();
  const dispatching = startDispatching(parts, {
    clock,
    log,
    upstream: drain.upstream(rawUpstream),
    concurrency: options.concurrency ?? 64,
    onEvent: options.onDispatch
      ? (event) => {
          telemetry.onDispatch(event);
          options.onDispatch!(event);
        }
      : telemetry.onDispatch,
    ...(options.dispatcher ? { options: options.dispatcher } : {}),
    wrap: drain.handler,
  });
  settle = dispatching.settle;
  const { subscription } = dispatching;

  const app = createEdgeFromParts({
    parts,
    clock,
    log,
    options: options.edge,
    adminKeyHash: options.adminKey ? hashApiKey(options.adminKey) : undefined,
    onAdmission: telemetry.onAdmission,
    // The dashboard (behind the admin key when there is one) and Prometheus metrics (open: loopback by default).
    dashboard: { telemetry, prometheus, openMetrics: true },
    stopTaking: stopTaking.signal,
    stopWaiting: stopWaiting.signal,
  });
  const edge = await listen(app.fetch, host, options.port ?? 8787);

  return {
    url: edge.url,
    app,
    gpu,
    policy,
    gpuUrl: gpuServer.url,
    queue,
    telemetry,
    async close() {
      stopTaking.abort();
      const edgeClosed = closeServer(edge.server);
      // The embedded queue dies with the process: serve what it holds while the drain time lasts.
      // A broker keeps its messages: stop taking them, and finish or hand back those in flight.
      const outcome = await drain.run(async () => {
        if (idle) await untilIdle(clock, idle, drain.overdue);
        await subscription.close();
      });
      log.info(
        outcome,
        outcome.drained ? 'drained' : 'drain time over: work in flight handed back, waiting clients answered',
      );
      stopWaiting.abort();
      await parts.close();
      await rawUpstream.close();
      gpu.close();
      // Idle keep-alive sockets would hold close() open; answered ones are closed by `connection: close`.
      closeConnections(edge.server);
      await Promise.all([edgeClosed, closeServer(gpuServer.server)]);
      return outcome;
    },
  };
}
