/**
 * What a platform team would run instead of Sluice: the hard limiter (hard-limiter.ts,
 * the same quotas as Sluice's policy, 429 above them) sending what passes straight to
 * the same simulated GPU pool, whose own queue makes the difference:
 *
 * - `shallow`: the queue holds as many requests as the GPU has slots and gives up after
 *   the world's queue timeout (429 when full, 503 when too late);
 * - `fcfs`: vLLM's default waiting queue: unbounded, first come first served, no
 *   timeout; only the client's own timeout (the OpenAI SDK's) ends a wait;
 * - `priority`: the same queue ordered by the request's `priority` (vLLM's
 *   `--scheduling-policy priority`), set from the tier: the heaviest tier first.
 *
 * docs/baselines.md says why each is there.
 */
import type { Policy } from '../../lib/policy/schema.js';
import type { GpuSimOptions } from '../../functions/gpu-sim/app.js';
import { createGpuPools } from './gpu-pools.js';
import { embeddedEngine } from './engine.js';
import { createHardLimiter } from './hard-limiter.js';
import { isOk, Recorder } from './recorder.js';
import { stopOnStall } from './stall.js';
import { isEventStream, readStreamAnswer } from './stream-answer.js';
import {
  busySlotMs,
  CLIENT_TIMEOUT_MS,
  gpuFigures,
  replay,
  withClientTimeout,
  type RunOptions,
  type Send,
  type SystemRun,
} from './systems.js';
import { GPU_BASE_URL, gpuSimOptions, requestBody, worldPolicy, type World } from './world.js';

export type BaselineName = 'shallow' | 'fcfs' | 'priority';

export const BASELINES: readonly BaselineName[] = ['shallow', 'fcfs', 'priority'];

/** How tables name each system. */
export const SYSTEM_LABELS: Readonly<Record<BaselineName | 'sluice', string>> = {
  shallow: 'limiter + shallow GPU queue',
  fcfs: 'limiter + FCFS engine queue',
  priority: 'limiter + priority engine queue',
  sluice: 'Sluice',
};

/** The GPU's queue under each baseline; the world's own settings are the shallow one. */
export function baselineGpuOptions(world: World, name: BaselineName): Omit<GpuSimOptions, 'clock'> {
  const base = gpuSimOptions(world);
  if (name === 'shallow') return base;
  return { ...base, queueLimit: null, maxQueueWaitMs: null, queuePolicy: name === 'priority' ? 'priority' : 'fcfs' };
}

/** Tiers by weight, heaviest first, then by name: the order Sluice's scheduler favours them in. */
export function tiersByWeight(policy: Policy): string[] {
  return Object.keys(policy.tiers).sort(
    (a, b) => policy.tiers[b]!.weight - policy.tiers[a]!.weight || (a < b ? -1 : a > b ? 1 : 0),
  );
}

/** vLLM priority of a tier: its rank by weight (0 for the heaviest); a tier the policy lacks goes last. */
export function tierPriority(policy: Policy): (tier: string) => number {
  const ranked = tiersByWeight(policy);
  return (tier) => {
    const i = ranked.indexOf(tier);
    return i < 0 ? ranked.length : i;
  };
}

export async function runBaseline(world: World, name: BaselineName, options: RunOptions = {}): Promise<SystemRun> {
  const timeline = options.timeline ?? (options.engine ?? embeddedEngine).timeline();
  const { clock, start } = timeline;
  const policy = worldPolicy(world, start);
  const recorder = new Recorder(start, world.bucketMs ?? 5_000);
  const gpu = createGpuPools(world, clock, baselineGpuOptions(world, name));
  const limiter = createHardLimiter(policy);
  const priorityOf = tierPriority(policy);
  const path = `${GPU_BASE_URL.replace(/^https?:\/\/[^/]+/, '')}/chat/completions`;
  let queuedAtGpu = 0;

  const send: Send = async (e, n, rec) => {
    const body = JSON.parse(requestBody(e, n)) as Record<string, unknown>;
    const decision = limiter.check(e.account, e.model, body, clock.now());
    if (!decision.ok) return { status: 429, reason: decision.reason, retryAfterSec: decision.retryAfterSec };
    rec.admittedAt = clock.now();
    if (name === 'priority') body.priority = priorityOf(rec.tier);
    return withClientTimeout(clock, world.clientTimeoutMs ?? CLIENT_TIMEOUT_MS, async (signal) => {
      const headers = { 'content-type': 'application/json' };
      const res = await gpu.request(e.model, path, { method: 'POST', headers, body: JSON.stringify(body), signal });
      const queuedMs = res.headers.get('x-sim-queue-ms');
      if (queuedMs !== null) {
        rec.startedAt = rec.admittedAt! + Number(queuedMs);
        if (res.headers.get('x-sim-queued') === '1') queuedAtGpu++;
      }
      // The same client-side reading as Sluice's streams (stream-answer.ts), so their TTFT compares.
      if (e.stream && isOk(res.status) && isEventStream(res)) return readStreamAnswer(res, rec, clock, signal);
      await res.text();
      const retry = Number(res.headers.get('retry-after'));
      if (isOk(res.status)) return { status: res.status };
      const retryAfter = res.headers.has('retry-after') && Number.isFinite(retry) ? { retryAfterSec: retry } : {};
      return { status: res.status, reason: `gpu:${res.status}`, ...retryAfter };
    });
  };

  const progress = options.progress && ((line: string) => options.progress!(`${name}: ${line}`));
  const { endMs, unanswered, stalled, resendsPending } = await replay(
    world,
    timeline,
    recorder,
    send,
    () => busySlotMs(gpu.stats()),
    progress,
  );
  if (stalled) {
    const facts = {
      system: name,
      admittedGate: 'the GPU (queued or running)',
      kind: stalled,
      timeline,
      attempts: recorder.attempts,
      resendsPending,
    };
    stopOnStall({ ...facts, gpu: gpu.stats() }, options.progress, () => gpu.close());
  }
  gpu.close();
  return { system: name, recorder, gpu: gpuFigures(gpu.stats(), queuedAtGpu), endMs, unanswered };
}
