/**
 * What a scenario is played against: the accounts and their tenants and tiers, the
 * limits, the simulated GPU pool, and the trace. Sluice and the baselines get the
 * same world; only the system in front of the GPU (and the GPU's own queue) differs.
 */
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { parsePolicy, type Policy, type PolicyInput } from '../../lib/policy/schema.js';
import type { GpuSimOptions } from '../../functions/gpu-sim/app.js';
import type { TraceEvent } from './trace.js';

export const LAB_MODEL = 'sim-llm';
export const GPU_BASE_URL = 'http://gpu.sim/v1';
/** A minute-aligned start (2026-01-01T00:00:00Z), so fixed windows line up with the trace. */
export const LAB_EPOCH = Date.UTC(2026, 0, 1);

export type GpuOptions = Omit<GpuSimOptions, 'clock' | 'models'>;

export interface AccountSpec {
  readonly tenant: string;
  readonly tier: string;
  readonly limits?: NonNullable<PolicyInput['accounts'][string]['limits']>;
}

export interface World {
  readonly name: string;
  readonly trace: readonly TraceEvent[];
  readonly accounts: Readonly<Record<string, AccountSpec>>;
  readonly tenants?: PolicyInput['tenants'];
  readonly tiers?: PolicyInput['tiers'];
  readonly defaults?: PolicyInput['defaults'];
  /** Booked bursts (lib/policy reservations), times in ms from the start of the run. */
  readonly reservations?: readonly {
    readonly id: string;
    readonly tenant: string;
    readonly fromMs: number;
    readonly toMs: number;
    readonly extra: { readonly rpm?: number; readonly tpm?: number; readonly reservoir?: number };
  }[];
  readonly modelLimits?: NonNullable<PolicyInput['models'][string]['limits']>;
  /** The simulated GPU pool: Sluice's capacity gate gets the same slot count unless `model` says otherwise. */
  readonly gpu: GpuOptions & { readonly slots: number };
  /**
   * The GPU's slots split among models, each served by a pool of its own (gpu-pools.ts) with
   * `gpu`'s settings; they add up to `gpu.slots`. Default: one model, LAB_MODEL, on every slot.
   */
  readonly pools?: Readonly<Record<string, number>>;
  /** The model as the policy declares it, where it differs from the GPU: other slots, slots from its metrics. */
  readonly model?: {
    readonly slots?: number;
    readonly saturation?: NonNullable<PolicyInput['models'][string]['saturation']>;
  };
  /** How long a client waits for one HTTP answer before giving up; default the OpenAI SDK's (systems.ts CLIENT_TIMEOUT_MS). */
  readonly clientTimeoutMs?: number;
  /** Dispatcher workers (concurrent deliveries) for Sluice. */
  readonly workers?: number;
  /**
   * Dispatchers sharing the store, each with its own flow control (default 1). On the
   * embedded engine they take its deliveries in turn, as consumers of one group would; on
   * the real engine each has its own RocketMQ consumer client and Redis connections (one
   * process still: two cores leave no room for more).
   */
  readonly dispatchers?: number;
  /** Messages of one LiteTopic in flight at once (the broker's concurrent pop); default: the GPU slots, so one LiteTopic can fill the pool. */
  readonly inFlightPerTopic?: number;
  /** Feed Sluice's telemetry (lib/telemetry) and record, each second, the account its dashboard shows on top. */
  readonly dashboard?: boolean;
  /** Length of the chart's time buckets. */
  readonly bucketMs?: number;
  /** How long after the last arrival the run keeps going so waiting requests finish (default: drainMsOf). */
  readonly drainMs?: number;
}

/** After the longest maximum wait, what is left is at most calls running: this long for them to end. */
const DRAIN_AFTER_MAX_WAIT_MS = 15 * 60_000;

/**
 * How long after the last arrival a run waits for answers. By default past the longest
 * tier's maximum wait: Sluice answers every request by then (served, or 504 expired), so
 * an overloaded trace still draining is reported, not taken for a stall, however deep
 * the backlog it builds.
 */
export function drainMsOf(world: World): number {
  if (world.drainMs !== undefined) return world.drainMs;
  const longest = Math.max(0, ...Object.values(worldPolicy(world).tiers).map((t) => t.maxQueueWaitMs));
  return longest + DRAIN_AFTER_MAX_WAIT_MS;
}

export const apiKey = (account: string) => `sk-lab-${account}`;

export interface LabPool {
  readonly model: string;
  readonly slots: number;
  /** Where Sluice's dispatcher calls it (the policy's upstream). */
  readonly upstream: string;
}

/** Messages of one LiteTopic in flight at once: the world's setting, or enough for one LiteTopic to fill its model's pool. */
export function inFlightPerTopicOf(world: World): number {
  return world.inFlightPerTopic ?? Math.max(...labPools(world).map((p) => p.slots));
}

/** The world's models and their pools; throws if the split does not add up to the GPU's slots. */
export function labPools(world: World): LabPool[] {
  if (!world.pools) return [{ model: LAB_MODEL, slots: world.gpu.slots, upstream: GPU_BASE_URL }];
  const pools = Object.entries(world.pools);
  const total = pools.reduce((n, [, slots]) => n + slots, 0);
  if (pools.length === 0 || total !== world.gpu.slots || pools.some(([, n]) => !Number.isInteger(n) || n <= 0))
    throw new Error(
      `pools: ${JSON.stringify(world.pools)} must split the GPU's ${world.gpu.slots} slots, each a positive integer`,
    );
  if (world.model?.slots !== undefined) throw new Error('pools: a declared slot count (model.slots) is for one model');
  // Model names are not host names: each pool's origin is its place in the split.
  return pools.map(([model, slots], i) => ({ model, slots, upstream: `http://gpu-${i}.sim/v1` }));
}

/**
 * The Sluice policy of a world, as a policy file would hold it; accounts' keys are
 * `sk-lab-<account>`. Reservation times count from `epoch`, where the trace starts.
 */
export function worldPolicyInput(world: World, epoch = LAB_EPOCH): PolicyInput {
  const tenants: PolicyInput['tenants'] = { ...world.tenants };
  for (const a of Object.values(world.accounts)) if (!Object.hasOwn(tenants, a.tenant)) tenants[a.tenant] = {};
  return {
    tiers: world.tiers ?? defaultTiers,
    defaults: world.defaults ?? defaultLimits,
    models: Object.fromEntries(
      labPools(world).map((pool) => [
        pool.model,
        {
          slots: world.model?.slots ?? pool.slots,
          ...(world.model?.saturation ? { saturation: world.model.saturation } : {}),
          upstreams: [pool.upstream],
          defaultMaxTokens: 256,
          ...(world.modelLimits ? { limits: world.modelLimits } : {}),
        },
      ]),
    ),
    tenants,
    reservations: (world.reservations ?? []).map((r) => ({
      id: r.id,
      tenant: r.tenant,
      // Booked on the first pool's model: the lab's reservations are for one model.
      model: labPools(world)[0]!.model,
      startsAt: epoch + r.fromMs,
      endsAt: epoch + r.toMs,
      extra: { rpm: r.extra.rpm ?? 0, tpm: r.extra.tpm ?? 0, reservoir: r.extra.reservoir ?? 0 },
    })),
    accounts: Object.fromEntries(
      Object.entries(world.accounts).map(([id, a]) => [
        id,
        {
          tenant: a.tenant,
          tier: a.tier,
          keyHashes: [hashApiKey(apiKey(id))],
          ...(a.limits ? { limits: a.limits } : {}),
        },
      ]),
    ),
  };
}

export function worldPolicy(world: World, epoch = LAB_EPOCH): Policy {
  return parsePolicy(worldPolicyInput(world, epoch));
}

/** GPU options for the simulator: every request generates exactly its max_tokens. */
export function gpuSimOptions(world: World): Omit<GpuSimOptions, 'clock'> {
  return {
    models: labPools(world).map((p) => p.model),
    minOutputTokens: 8192,
    maxOutputTokens: 8192,
    decodeStepTokens: 16,
    ...world.gpu,
  };
}

/**
 * The request body a trace event becomes: a short prompt (or one of `promptTokens`, four
 * characters a token), `tokens` as max_tokens unless it omits it, and `stream` if it streams.
 */
export function requestBody(e: TraceEvent, n: number): string {
  const head = `lab request ${n}`;
  const content = e.promptTokens ? head.padEnd(e.promptTokens * 4, ' context') : head;
  const messages = [{ role: 'user', content }];
  const maxTokens = e.omitsMaxTokens ? {} : { max_tokens: e.tokens };
  return JSON.stringify({ model: e.model, messages, ...maxTokens, ...(e.stream ? { stream: true } : {}) });
}

/** Whether any request of the world streams (time to first token is measured only then). */
export function worldStreams(world: World): boolean {
  return world.trace.some((e) => e.stream === true);
}

/**
 * Engine flags every trace scenario takes: `--in-flight N` (messages of one LiteTopic in flight
 * at once; default the GPU slots), `--workers N` (dispatcher concurrency; default 64) and
 * `--dispatchers N` (dispatchers sharing the store; default 1).
 */
export function withEngineFlags(world: World, flags: Readonly<Record<string, string>>): World {
  const int = (name: string) => {
    const raw = flags[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
    return n;
  };
  const inFlight = int('in-flight');
  const workers = int('workers');
  const dispatchers = int('dispatchers');
  return {
    ...world,
    ...(inFlight ? { inFlightPerTopic: inFlight } : {}),
    ...(workers ? { workers } : {}),
    ...(dispatchers ? { dispatchers } : {}),
  };
}
