/**
 * Replays a world's trace through one system on its own timeline (a VirtualClock,
 * or the wall clock with the real engine). Here: the replay itself, the clients, and
 * Sluice, through the real code paths: the edge app (`app.request`, in process) →
 * admission on the engine's store → its LiteQueue → createDispatcher → the
 * in-process upstream client → the simulated GPU. The engine (engine.ts) decides
 * what store, queue and result channel: in-process, or redis-server and RocketMQ.
 * The baselines are in baselines.ts.
 *
 * Clients are the same for every system: one request per trace event, resent after
 * a refusal only if the event carries a retry behavior, and given up after the
 * OpenAI SDK's default timeout (then counted as refused, reason `client-timeout`).
 */
import { EligibleBusy, type WaitedWhere } from './eligible-busy.js';
import { keptAliveFailure } from './kept-alive.js';
import { createDispatcher, settleDeadLetter } from '../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../lib/dispatch-events.js';
import { parsePolicy } from '../../lib/policy/schema.js';
import type { DeadLetter, MessageHandler } from '../../lib/queue/types.js';
import { silentLogger } from '../../lib/telemetry/log.js';
import { createTelemetry } from '../../lib/telemetry/telemetry.js';
import { createInProcessUpstream } from '../../lib/upstream/in-process.js';
import { createEdgeApp } from '../../functions/edge/app.js';
import type { AdmissionEvent } from '../../functions/edge/deps.js';
import type { GpuSimStats } from '../../functions/gpu-sim/app.js';
import { busySlotMs, createGpuPools } from './gpu-pools.js';
import { embeddedEngine, type LabEngine, type Timeline } from './engine.js';
import { isOk, Recorder, type Attempt } from './recorder.js';
import { stopOnStall, type StallKind } from './stall.js';
import { isEventStream, readStreamAnswer } from './stream-answer.js';
import { WaitTracker } from './wait-split.js';
import { retryDelayMs, type TraceEvent } from './trace.js';
import type { BaselineName } from './baselines.js';
import { apiKey, drainMsOf, gpuSimOptions, requestBody, worldPolicyInput, type World } from './world.js';

export type SystemName = 'sluice' | BaselineName;

export interface GpuFigures {
  readonly slots: number;
  readonly served: number;
  /** Answered 429 by the GPU: its own queue was full. */
  readonly refused429: number;
  /** Answered 503 by the GPU: no slot within its queue timeout. */
  readonly refused503: number;
  /** Requests that had to wait inside the GPU for a slot (beyond its capacity when they arrived). */
  readonly queuedAtGpu: number;
  readonly peakBusy: number;
  readonly peakQueue: number;
  /** Busy slot-time over slot-time, whole run. */
  readonly utilization: number;
}

export interface SystemRun {
  readonly system: SystemName;
  readonly recorder: Recorder;
  readonly gpu: GpuFigures;
  /** Virtual ms from the start until the last answer. */
  readonly endMs: number;
  /** Requests still unanswered when the run gave up waiting (should be 0). */
  readonly unanswered: number;
  /** Sluice only: dispatcher events by type (and suspends by cause). */
  readonly dispatch?: Readonly<Record<string, number>>;
  /** Sluice only: which store, queue and result channel it ran on. */
  readonly parts?: Readonly<Record<string, string>>;
  /** Sluice only: messages of one LiteTopic in flight at once, as the engine ran it. */
  readonly inFlightPerTopic?: number;
  /** Sluice on the embedded engine: LiteTopics the engine held at the end, and messages dead-lettered. */
  readonly queue?: { readonly liteTopics: number; readonly deadLettered: number; readonly delivered: number };
  /** Sluice: GPU busy slot-time over slot-time while requests waited for a slot (eligible-busy.ts), and how long they did. */
  readonly gpuWhileSlotWaited?: {
    readonly utilization: number | null;
    readonly waitedMs: number;
    /** Idle slot-time while they waited, by where they were (eligible-busy.ts). */
    readonly idle: Record<WaitedWhere, number> | null;
  };
  /** Sluice, a model whose slots come from its servers' metrics: each change (ms from the start). */
  readonly slotsRead?: readonly { readonly t: number; readonly slots: number; readonly reason: string }[];
  /** Sluice with `world.dashboard`: each second (ms from the start), the account on top of the dashboard's burst view. */
  readonly topAccounts?: readonly { readonly t: number; readonly account: string | null }[];
}

export interface Outcome {
  readonly status: number;
  readonly reason?: string;
  readonly retryAfterSec?: number;
}

export type Send = (e: TraceEvent, n: number, rec: Attempt) => Promise<Outcome>;

/** openai-node's DEFAULT_TIMEOUT (10 minutes): how long a client waits for one HTTP answer. */
export const CLIENT_TIMEOUT_MS = 600_000;

/**
 * A client's own timeout around one HTTP exchange: past `ms` it stops waiting, aborts
 * `signal` (a server that notices drops the request) and counts the attempt as refused.
 */
export function withClientTimeout(
  clock: Timeline['clock'],
  ms: number,
  work: (signal: AbortSignal) => Promise<Outcome>,
): Promise<Outcome> {
  const gaveUp = new AbortController();
  return new Promise<Outcome>((resolve, reject) => {
    const cancel = clock.setTimer(ms, () => {
      gaveUp.abort(new Error('client timeout'));
      resolve({ status: 408, reason: 'client-timeout' });
    });
    work(gaveUp.signal).then(
      (out) => {
        cancel();
        resolve(out);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

export function tierOf(world: World, e: TraceEvent): string {
  return world.accounts[e.account]?.tier ?? e.tier ?? 'unknown';
}

/** A fixed draw in [0, 1) per (request, attempt): retry jitter that replays the same every run. */
function jitterDraw(request: number, attempt: number): number {
  let h = Math.imul(request ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(attempt, 0xc2b2ae35);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
}

/**
 * Feeds the trace to `send` on the clock, retries per event, waits for the last answer.
 * `stalled`: the clock ran out of timers with answers still awaited (`quiet`), or the
 * drain time passed with answers still awaited (`gave-up`).
 */
export async function replay(
  world: World,
  timeline: Timeline,
  recorder: Recorder,
  send: Send,
  sampleGpu: () => number,
  progress?: (line: string) => void,
): Promise<{ endMs: number; unanswered: number; stalled?: StallKind; resendsPending: number }> {
  const { clock, start } = timeline;
  // The lab's own bookkeeping does not count as something left to happen (engine.ts).
  const housekeeping = timeline.housekeeping ?? ((ms: number, fn: () => void) => clock.setTimer(ms, fn));
  let resends = 0;
  const trace = world.trace;
  const lastArrival = trace.length ? trace[trace.length - 1]!.t : 0;
  const bucketMs = recorder.bucketMs;
  let outstanding = 0;
  let sent = 0;
  let answered = 0;
  let lastAnswer = start;
  let next = 0;

  const launch = (e: TraceEvent, n: number, attemptNo: number) => {
    outstanding++;
    sent++;
    const account = world.accounts[e.account];
    const who = {
      request: n,
      tier: tierOf(world, e),
      account: e.account,
      tenant: account?.tenant ?? e.tenant ?? e.account,
    };
    const rec = recorder.attempt({ ...who, ...(e.stream ? { stream: true } : {}) }, clock.now());
    send(e, n, rec)
      .catch((error: unknown): Outcome => ({
        status: 599,
        reason: `client-error:${error instanceof Error ? error.message : String(error)}`,
      }))
      .then((out) => {
        rec.status = out.status;
        rec.answeredAt = clock.now();
        if (out.reason) rec.reason = out.reason;
        lastAnswer = clock.now();
        outstanding--;
        answered++;
        const retry = e.retry;
        if (!isOk(out.status) && retry && attemptNo < retry.maxAttempts && clock.now() - start <= lastArrival) {
          const wait = retryDelayMs(
            retry,
            attemptNo,
            out.retryAfterSec === undefined ? undefined : out.retryAfterSec * 1000,
            jitterDraw(n, attemptNo),
          );
          outstanding++; // the pending resend keeps the run going
          resends++;
          clock.setTimer(wait, () => {
            outstanding--;
            resends--;
            launch(e, n, attemptNo + 1);
          });
        }
      });
  };

  const scheduleArrivals = () => {
    if (next >= trace.length) return;
    clock.setTimer(start + trace[next]!.t - clock.now(), () => {
      const t = trace[next]!.t;
      while (next < trace.length && trace[next]!.t === t) {
        launch(trace[next]!, next, 1);
        next++;
      }
      scheduleArrivals();
    });
  };

  // GPU occupancy at each bucket end, for the utilization series.
  let sampling = true;
  const tick = () => {
    recorder.gpuSample(sampleGpu());
    if (sampling) housekeeping(bucketMs, tick);
  };
  housekeeping(bucketMs, tick);

  if (progress && timeline.progressEveryMs) {
    const report = () => {
      if (!sampling) return;
      const at = Math.round((clock.now() - start) / 1000);
      const of = Math.round(lastArrival / 1000);
      progress(
        `${at <= of ? `${at} s of ${of} s` : `draining, ${at} s (trace ended at ${of} s)`}: ${sent} sent, ${answered} answered, ${outstanding} waiting`,
      );
      housekeeping(timeline.progressEveryMs!, report);
    };
    housekeeping(timeline.progressEveryMs, report);
  }

  scheduleArrivals();
  await timeline.until(start + lastArrival + 1);
  const giveUpAt = start + lastArrival + drainMsOf(world);
  let stalled: StallKind | undefined;
  while ((outstanding > 0 || next < trace.length) && clock.now() < giveUpAt) {
    if (timeline.pendingTimers?.() === 0) {
      stalled = 'quiet';
      break;
    }
    await timeline.until(clock.now() + bucketMs);
  }
  if (outstanding > 0) stalled ??= 'gave-up';
  sampling = false;
  // One more sample so the last partial bucket is covered.
  if (!stalled) await timeline.until(clock.now() + bucketMs);
  return {
    endMs: lastAnswer - start,
    unanswered: outstanding,
    resendsPending: resends,
    ...(stalled ? { stalled } : {}),
  };
}

export function gpuFigures(s: GpuSimStats, queuedAtGpu: number): GpuFigures {
  return {
    slots: s.slots,
    served: s.served,
    refused429: s.rejected429,
    refused503: s.rejected503,
    queuedAtGpu,
    peakBusy: s.peakBusy,
    peakQueue: s.peakQueue,
    utilization: Math.round(s.utilization * 1000) / 1000,
  };
}

export { busySlotMs };

export interface RunOptions {
  readonly engine?: LabEngine;
  /** Where the run's trace starts (runs compared side by side share one); default: a fresh timeline of the engine. */
  readonly timeline?: Timeline;
  readonly progress?: (line: string) => void;
}

export async function runSluice(world: World, options: RunOptions = {}): Promise<SystemRun> {
  const engine = options.engine ?? embeddedEngine;
  const timeline = options.timeline ?? engine.timeline();
  const { clock, start } = timeline;
  const policyInput = worldPolicyInput(world, start);
  const policy = parsePolicy(policyInput);
  const recorder = new Recorder(start, world.bucketMs ?? 5_000);
  const gpu = createGpuPools(world, clock, gpuSimOptions(world));
  let queuedAtGpu = 0;
  const upstream = createInProcessUpstream({
    fetch: gpu.byOrigin,
    clock,
    onResponse: (_, res) => {
      if (res.headers.get('x-sim-queued') === '1') queuedAtGpu++;
    },
  });
  let settle: (deadLetter: DeadLetter) => Promise<void> = async () => {};
  const backend = await engine.sluice(world, policyInput, timeline, { settleDeadLetter: (d) => settle(d) });
  const { store, queue, results } = backend;
  let ids = 0;
  let leases = 0;
  const byId = new Map<string, Attempt>();
  let sending: Attempt | undefined;
  const dispatch: Record<string, number> = {};
  // Async requests (202) are followed to their end: the dispatcher's last word on them.
  const finals = new Map<string, (o: Outcome) => void>();
  const early = new Map<string, Outcome>();
  const final = (id: string, o: Outcome) => {
    const resolve = finals.get(id);
    if (resolve) {
      finals.delete(id);
      resolve(o);
    } else early.set(id, o);
  };
  const waits = new WaitTracker();
  const slotsRead: { t: number; slots: number; reason: string }[] = [];
  const eligible = new EligibleBusy(gpu.byModel, () => clock.now());
  const onEvent = (event: DispatchEvent) => {
    eligible.observe(event);
    const key = event.type === 'suspended' ? `suspended:${event.cause}` : event.type;
    dispatch[key] = (dispatch[key] ?? 0) + 1;
    if (event.type === 'capacity') slotsRead.push({ t: clock.now() - start, slots: event.slots, reason: event.reason });
    waits.observe(event, clock.now());
    if ('envelope' in event) {
      const rec = byId.get(event.envelope.id);
      if (rec) rec.wait ??= waits.trace(event.envelope.id);
      if (['completed', 'failed', 'expired'].includes(event.type)) waits.forget(event.envelope.id);
    }
    if (event.type === 'started') {
      const rec = byId.get(event.envelope.id);
      if (rec && rec.startedAt === undefined) rec.startedAt = clock.now();
    }
    if (!('envelope' in event) || event.envelope.mode !== 'async') return;
    if (event.type === 'completed') final(event.envelope.id, { status: 200 });
    if (event.type === 'failed') final(event.envelope.id, { status: 502, reason: 'upstream-failed' });
    if (event.type === 'expired') final(event.envelope.id, { status: 504, reason: 'expired' });
  };
  const telemetry = world.dashboard
    ? createTelemetry({
        clock,
        log: silentLogger,
        policy: () => policy,
        ...(backend.depth ? { depth: backend.depth } : {}),
      })
    : undefined;
  const topAccounts: { t: number; account: string | null }[] = [];
  const housekeeping = timeline.housekeeping ?? ((ms: number, fn: () => void) => clock.setTimer(ms, fn));
  let watching = Boolean(telemetry);
  const watch = () => {
    if (!telemetry || !watching) return;
    topAccounts.push({ t: clock.now() - start, account: telemetry.live(1).accounts[0]?.account ?? null });
    housekeeping(1_000, watch);
  };
  housekeeping(1_000, watch);
  const dispatchDeps = {
    clock,
    store,
    results,
    attempts: backend.attempts,
    upstream,
    policy: () => policy,
    log: silentLogger,
    newId: () => `lease-${++leases}`,
    onEvent: (e: DispatchEvent) => {
      onEvent(e);
      telemetry?.onDispatch(e);
    },
  };
  // Several dispatchers: each its own flow control and congestion state, one shared store.
  let subscription: { close(): Promise<void> };
  const concurrency = world.workers ?? 64;
  settle = (d) => settleDeadLetter(dispatchDeps, d);
  if (backend.dispatchers) {
    // Each its own consumer and connections: the broker spreads the LiteTopics over them.
    const subs = backend.dispatchers.map((d) =>
      d.queue.subscribe(
        createDispatcher({
          ...dispatchDeps,
          store: d.store,
          results: d.results,
          attempts: d.attempts,
          options: { flow: { workers: concurrency } },
        }),
        { concurrency },
      ),
    );
    subscription = { close: async () => void (await Promise.all(subs.map((s) => s.close()))) };
  } else {
    // They take the subscription's deliveries in turn: each its share of the workers.
    const n = world.dispatchers ?? 1;
    const handlers = Array.from({ length: n }, () =>
      createDispatcher({ ...dispatchDeps, options: { flow: { workers: Math.floor(concurrency / n) } } }),
    );
    let turn = 0;
    const handler: MessageHandler = (m, worker) => handlers[turn++ % handlers.length]!(m, worker);
    subscription = queue.subscribe(handler, { concurrency });
  }
  const onAdmission = (event: AdmissionEvent) => {
    telemetry?.onAdmission(event);
    const rec = byId.get(event.id);
    if (rec && event.outcome === 'admitted') {
      rec.admittedAt = clock.now();
      rec.wait = waits.admitted(event.id, event.liteTopic, clock.now());
    }
  };
  const app = createEdgeApp({
    clock,
    store,
    queue,
    results,
    policy: () => policy,
    log: silentLogger,
    onAdmission,
    newId: () => {
      const id = `req_${(++ids).toString(36)}`;
      // The request-id middleware runs first and synchronously: this is the attempt being sent.
      if (sending) byId.set(id, sending);
      sending = undefined;
      return id;
    },
  });

  const send: Send = async (e, n, rec) => {
    let accepted: string | undefined;
    // The client's timeout covers its HTTP exchange; an accepted async request (202) is followed without one.
    const out = await withClientTimeout(clock, world.clientTimeoutMs ?? CLIENT_TIMEOUT_MS, async (signal) => {
      sending = rec;
      const pending = app.request('/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey(e.account)}`, 'content-type': 'application/json' },
        body: requestBody(e, n),
      });
      if (sending !== undefined)
        throw new Error(
          'lab: the edge did not take a request id synchronously; attempts cannot be matched to requests',
        );
      const res = await pending;
      const id = res.headers.get('x-sluice-request-id') ?? '';
      if (res.status === 202) {
        accepted = id;
        return { status: 202 };
      }
      // Read at the client, as the baselines' streams are (stream-answer.ts): users feel the edge's relay too.
      if (e.stream && isOk(res.status) && isEventStream(res)) {
        const streamed = await readStreamAnswer(res, rec, clock, signal);
        byId.delete(id);
        return streamed;
      }
      const body = (await res.json().catch(() => undefined)) as
        { error?: { code?: string; type?: string } } | undefined;
      byId.delete(id);
      const retry = Number(res.headers.get('retry-after'));
      if (isOk(res.status) && body?.error) return keptAliveFailure(body.error);
      if (isOk(res.status)) return { status: res.status };
      const reason =
        res.status === 429
          ? `limit:${res.headers.get('x-sluice-reason') ?? 'unknown'}`
          : res.status === 504
            ? 'expired'
            : res.status === 502
              ? 'upstream-failed'
              : `http-${res.status}:${body?.error?.code ?? ''}`;
      return {
        status: res.status,
        reason,
        ...(Number.isFinite(retry) && res.headers.has('retry-after') ? { retryAfterSec: retry } : {}),
      };
    });
    if (accepted === undefined || out.status !== 202) return out;
    // Accepted for later: the client's answer is what the dispatcher eventually did.
    const id = accepted;
    const final = early.get(id) ?? (await new Promise<Outcome>((resolve) => finals.set(id, resolve)));
    early.delete(id);
    byId.delete(id);
    return final;
  };

  const progress = options.progress && ((line: string) => options.progress!(`sluice: ${line}`));
  const { endMs, unanswered, stalled, resendsPending } = await replay(
    world,
    timeline,
    recorder,
    send,
    () => busySlotMs(gpu.stats()),
    progress,
  );
  watching = false;
  if (stalled) {
    const facts = {
      system: 'sluice',
      kind: stalled,
      timeline,
      attempts: recorder.attempts,
      resendsPending,
      gpu: gpu.stats(),
    };
    stopOnStall({ ...facts, ...(backend.depth ? { depth: backend.depth } : {}) }, options.progress, () => {
      // Handlers wait on a clock nobody advances any more: closing would wait forever.
      void subscription.close();
      void backend.close();
      gpu.close();
    });
  }
  const qs = backend.queueStats?.();
  // Taken before closing: what a handler still running does while the engine closes is not the run's.
  const run: SystemRun = {
    system: 'sluice',
    recorder,
    gpu: gpuFigures(gpu.stats(), queuedAtGpu),
    endMs,
    unanswered,
    dispatch: Object.fromEntries(Object.entries(dispatch).sort()),
    parts: backend.describe,
    inFlightPerTopic: backend.inFlightPerTopic,
    ...(qs ? { queue: { liteTopics: qs.liteTopics, deadLettered: qs.deadLettered, delivered: qs.delivered } } : {}),
    ...(telemetry ? { topAccounts } : {}),
    ...(Object.values(policy.models).some((m) => m.saturation) ? { slotsRead } : {}),
    gpuWhileSlotWaited: {
      utilization: eligible.utilization(),
      waitedMs: Math.round(eligible.waitedMs()),
      idle: eligible.idleShares(),
    },
  };
  await closeWhileTimePasses(
    timeline,
    subscription.close().then(() => backend.close()),
  );
  await upstream.close();
  gpu.close();
  return run;
}

/**
 * Waits for `closing` while time passes. With every request answered, a handler may still run:
 * a message delivered again while its long call was in flight (the embedded engine redelivers a
 * handler silent for 60 s) waits for a slot on the lab's virtual clock until it learns its request
 * was answered, and the consumer's close waits for it. Left alone, nothing advanced that clock and
 * the run ended in silence: a 2-slot replay of calls of a minute or more.
 */
async function closeWhileTimePasses(timeline: Timeline, closing: Promise<void>): Promise<void> {
  let closed = false;
  const done = closing.finally(() => {
    closed = true;
  });
  while (!closed && timeline.pendingTimers?.() !== 0) await timeline.until(timeline.clock.now() + 1_000);
  await done;
}
