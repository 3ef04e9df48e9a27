/**
 * replay: your own traffic. `npm run bench -- replay --trace my.jsonl` replays a
 * JSONL trace (one request a line: {t, account, model, tokens, tier, tenant?, stream?}; `stream: true`
 * asks for SSE and has its time to first token measured, bench/lib/trace.ts)
 * through Sluice and through the three hard-limiter baselines (bench/lib/baselines.ts),
 * on the policy defaults (lib/policy/defaults.ts) unless flags say otherwise:
 *
 *   --gpu-slots N     slots of the simulated GPU pool (default 8)
 *   --pools a=8,b=4   one pool per model instead, with these slots (every model of the trace named)
 *   --rpm N           requests per minute per tenant, for every system (default: policy default)
 *   --account-rpm N   requests per minute per account, for every system (default: policy default)
 *   --token-ms N      decode time per token on an idle GPU (default 10)
 *   --output-tokens A-B  each request generates A to B tokens (its own, from its prompt), at most its
 *                     `tokens` (max_tokens); default: exactly its `tokens`
 *   --max-tokens omitted  clients leave max_tokens out (with --output-tokens A-B): each request
 *                     generates A to B tokens whatever its `tokens`, and Sluice can only assume the
 *                     model's default (policy defaultMaxTokens); default: sent
 *   --policy FILE     a JSON file with any of `tiers`, `defaults`, `tenants` (lib/policy schema)
 *                     replacing the defaults, to try other limits on the same traffic
 *
 * Reported for Sluice beside every baseline: per tier success, goodput and Jain over
 * tenants; every tenant's share of requests served; the accounts Sluice served the
 * smallest share of, and those whose wait p99 was longest in Sluice (all of them in the JSON
 * report); then what users feel per tier.
 *
 * Every model of the trace is served by the one simulated pool, unless `--pools` gives each its
 * own (models on separate GPUs, behind one Sluice); accounts keep the first tier the trace gives them (default realtime) and their tenant (default:
 * the account itself).
 */
import { readFileSync } from 'node:fs';
import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import type { PolicyInput } from '../../lib/policy/schema.js';
import { compare, deliveriesPerCompleted } from '../lib/compare.js';
import {
  accountWaitTable,
  fairnessBySystem,
  modelTable,
  tenantTable,
  tierFairnessTable,
  worstAccountsTable,
} from '../lib/fairness-tables.js';
import { baselineParams, comparisonTables, feltHeadline } from '../lib/sections.js';
import { ms, pct, type FigureSpec } from '../lib/versus.js';
import { LAB_MODEL, withEngineFlags, type AccountSpec, type World } from '../lib/world.js';
import type { Scenario, ScenarioContext, ScenarioOutput } from './types.js';

/** A trace may have thousands of accounts: the table shows those Sluice served worst; the JSON report has all. */
const ACCOUNTS_SHOWN = 15;

function intFlag(flags: ScenarioContext['flags'], name: string): number | undefined {
  const raw = flags[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
}

/** `--output-tokens A-B`: what requests generate, when less than they ask for (max_tokens). */
function outputTokensFlag(raw: string | undefined): { minOutputTokens: number; maxOutputTokens: number } | {} {
  if (raw === undefined) return {};
  const m = /^(\d+)-(\d+)$/.exec(raw);
  const [min, max] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || min < 1 || max < min) throw new Error(`--output-tokens: expected A-B with 1 <= A <= B, got "${raw}"`);
  return { minOutputTokens: min, maxOutputTokens: max };
}

/** `--pools a=8,b=4`: each model's slots, in a Map (model names come from the user). */
function poolsFlag(raw: string | undefined): Map<string, number> | undefined {
  if (raw === undefined) return undefined;
  const pools = new Map<string, number>();
  for (const part of raw.split(',')) {
    const [model, n, ...rest] = part.split('=');
    const slots = Number(n);
    if (!model || rest.length || !Number.isInteger(slots) || slots <= 0 || pools.has(model))
      throw new Error(
        `--pools: expected model=slots,... with each model once and slots a positive integer, got "${part}"`,
      );
    pools.set(model, slots);
  }
  return pools;
}

interface PolicyOverlay {
  readonly tiers?: PolicyInput['tiers'];
  readonly defaults?: PolicyInput['defaults'];
  readonly tenants?: PolicyInput['tenants'];
}

function readOverlay(path: string | undefined): PolicyOverlay {
  if (path === undefined) return {};
  const json = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error(`--policy ${path}: expected a JSON object`);
  const extra = Object.keys(json).filter((k) => !['tiers', 'defaults', 'tenants'].includes(k));
  if (extra.length)
    throw new Error(`--policy ${path}: only tiers, defaults and tenants can be set here, not ${extra.join(', ')}`);
  return json as PolicyOverlay;
}

export function replayWorld(ctx: Pick<ScenarioContext, 'trace' | 'flags'>): World {
  if (!ctx.trace) throw new Error('replay needs --trace <file.jsonl>');
  const overlay = readOverlay(ctx.flags.policy);
  const tierSpecs = overlay.tiers ?? defaultTiers;
  const tiers = new Set(Object.keys(tierSpecs));
  const accounts: Record<string, AccountSpec> = {};
  for (const e of ctx.trace) {
    const tier = e.tier ?? 'realtime';
    if (!tiers.has(tier))
      throw new Error(`trace: unknown tier "${tier}" for account ${e.account} (known: ${[...tiers].join(', ')})`);
    if (Object.hasOwn(accounts, e.account)) continue;
    accounts[e.account] = {
      tenant: e.tenant ?? e.account,
      tier,
      ...(intFlag(ctx.flags, 'account-rpm') ? { limits: { rpm: intFlag(ctx.flags, 'account-rpm')! } } : {}),
    };
  }
  const rpm = intFlag(ctx.flags, 'rpm');
  const pools = poolsFlag(ctx.flags.pools);
  if (pools && ctx.flags['gpu-slots'] !== undefined) throw new Error('--pools sets the slots: leave out --gpu-slots');
  if (pools) {
    const unknown = [...new Set(ctx.trace.map((e) => e.model))].filter((m) => !pools.has(m));
    if (unknown.length)
      throw new Error(`trace: model ${unknown.join(', ')} has no pool (--pools names ${[...pools.keys()].join(', ')})`);
  }
  const slots = pools ? [...pools.values()].reduce((a, b) => a + b, 0) : (intFlag(ctx.flags, 'gpu-slots') ?? 8);
  const limits = overlay.defaults ?? defaultLimits;
  const outputs = outputTokensFlag(ctx.flags['output-tokens']);
  const maxTokens = ctx.flags['max-tokens'] ?? 'sent';
  if (maxTokens !== 'sent' && maxTokens !== 'omitted')
    throw new Error(`--max-tokens: expected sent or omitted, got "${maxTokens}"`);
  const omitsMaxTokens = maxTokens === 'omitted';
  if ((omitsMaxTokens || ctx.trace.some((e) => e.omitsMaxTokens)) && !('maxOutputTokens' in outputs))
    throw new Error(
      'requests that leave max_tokens out (--max-tokens omitted, or omits_max_tokens in the trace) need --output-tokens A-B: what they generate without one',
    );
  const trace = ctx.trace.map((e) => ({
    ...e,
    ...(pools ? {} : { model: LAB_MODEL }),
    ...(omitsMaxTokens ? { omitsMaxTokens } : {}),
  }));
  return {
    name: 'replay',
    trace,
    ...(pools ? { pools: Object.fromEntries(pools) } : {}),
    accounts,
    tiers: tierSpecs,
    ...(overlay.tenants ? { tenants: overlay.tenants } : {}),
    defaults: rpm
      ? { ...limits, tenant: { ...limits.tenant, rpm }, tenantModel: { ...limits.tenantModel, rpm } }
      : limits,
    gpu: {
      slots,
      baseTokenMs: intFlag(ctx.flags, 'token-ms') ?? 10,
      queueLimit: slots,
      maxQueueWaitMs: 5_000,
      ...outputs,
      // Without max_tokens a model stops where it wants to (up to its context), not at a default.
      ...('maxOutputTokens' in outputs ? { defaultMaxTokens: outputs.maxOutputTokens } : {}),
    },
    bucketMs: 5_000,
  };
}

export const replay: Scenario = {
  name: 'replay',
  description: 'your own JSONL trace through Sluice and the baseline (--trace file.jsonl)',
  engines: ['embedded', 'real'],
  run: (ctx) => runReplay(ctx),
};

/** The replay of `ctx.trace`; `figures` are a caller's own, headlined and compared beside replay's. */
export async function runReplay(ctx: ScenarioContext, figures: readonly FigureSpec[] = []): Promise<ScenarioOutput> {
  const world = withEngineFlags(replayWorld(ctx), ctx.flags);
  ctx.log(
    `replay: ${world.trace.length} requests from ${Object.keys(world.accounts).length} accounts, ${world.gpu.slots} GPU slots`,
  );
  const c = await compare(world, { ...(ctx.engine ? { engine: ctx.engine } : {}), progress: ctx.log });
  const systems = fairnessBySystem(c, world.trace);
  const specs: FigureSpec[] = [
    ...figures,
    {
      name: 'RefusedRatio',
      label: 'rate-limited ratio (refused / sent)',
      figure: (r) => r.refusedRatio,
      better: 'lower',
      format: pct,
    },
    {
      name: 'GpuRefused',
      label: 'GPU refused (429/503)',
      figure: (r) => r.gpu.refused429 + r.gpu.refused503,
      better: 'lower',
    },
    {
      name: 'DeliveriesPerCompleted',
      label: 'deliveries (baselines: attempts) per completed request',
      figure: deliveriesPerCompleted,
      better: 'lower',
      format: String,
    },
    {
      name: 'WaitP99Ms',
      label: 'wait before GPU p99',
      figure: (r) => r.total.waitMs.p99,
      better: 'lower',
      format: ms,
    },
    {
      name: 'LatencyP99Ms',
      label: 'latency (served) p99',
      figure: (r) => r.total.latencyMs.p99,
      better: 'lower',
      format: ms,
    },
  ];
  const models = [...new Set((ctx.trace ?? []).map((e) => e.model))].sort();
  return {
    scenario: 'replay',
    seed: ctx.seed,
    size: ctx.size,
    params: {
      requests: world.trace.length,
      models,
      servedBy: world.pools
        ? `one pool per model: ${Object.entries(world.pools)
            .map(([m, n]) => `${m} ${n} slots`)
            .join(', ')}`
        : `${LAB_MODEL} (one simulated pool)`,
      gpu: world.gpu,
      flags: ctx.flags,
      ...baselineParams(world, c),
    },
    headline: {
      requests: c.world.requests,
      ...feltHeadline(c, specs),
      sluiceGpuBusyWhileSlotWaited: c.runs.sluice.gpuWhileSlotWaited?.utilization ?? null,
    },
    tables: [
      tierFairnessTable(c.world.tiers, systems),
      ...(world.pools ? [modelTable(c.world.tiers, systems)] : []),
      tenantTable(c.world.tiers, systems),
      worstAccountsTable(c.world.tiers, systems, ACCOUNTS_SHOWN),
      accountWaitTable(c.world.tiers, systems, ACCOUNTS_SHOWN),
      ...comparisonTables(c, specs),
    ],
    details: { fairness: Object.fromEntries(systems.map((s) => [s.name, s.fairness])) },
    comparison: c,
  };
}
