/**
 * The policy the Config stack seeds into SSM on first deploy: the schema's defaults
 * (lib/policy/defaults.ts — seed 2's tiers 6/2/1 with shares 60/25/15 %, token bucket
 * burst 50 refilled 10/s), one model per configured GPU endpoint group, no tenants or
 * accounts yet (operators add them with `aws ssm put-parameter`, see infra/README.md).
 * It is validated with the schema at synth, so a bad seed never reaches SSM.
 */
import { defaultLimits, defaultTiers } from '../lib/policy/defaults.js';
import { parsePolicy, type PolicyInput } from '../lib/policy/schema.js';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from '../functions/runtime/config.js';

/** Slots assumed per model until the operator sets the real capacity. */
const DEFAULT_SLOTS = 8;

/**
 * `syncWaitLimitMs`: the longest the edge holds a sync client (below the Lambda timeout; see
 * edgeMaxSyncWaitMs). A sync tier whose requests may wait in the queue and then at the GPU longer
 * than that is seeded async (202 and a status URL): answered sync, the client would be cut off by
 * the function's timeout while its request still runs. CloudFront's 60 s origin read timeout is
 * no reason: a sync answer that waits sends keepalive bytes (functions/edge/keepalive.ts).
 */
export function seedPolicy(
  gpuEndpoints: Record<string, string[]>,
  options: { syncWaitLimitMs?: number } = {},
): PolicyInput {
  const models: PolicyInput['models'] = {};
  for (const [model, upstreams] of Object.entries(gpuEndpoints)) models[model] = { slots: DEFAULT_SLOTS, upstreams };
  const limit = options.syncWaitLimitMs;
  const tiers = Object.fromEntries(
    Object.entries(defaultTiers).map(([name, t]) => {
      const tier = t as { replyMode?: string; maxQueueWaitMs?: number };
      const longest = (tier.maxQueueWaitMs ?? Number.POSITIVE_INFINITY) + DEFAULT_UPSTREAM_TIMEOUT_MS;
      const tooLong = limit !== undefined && tier.replyMode === 'sync' && longest > limit;
      return [name, tooLong ? { ...t, replyMode: 'async' } : t];
    }),
  ) as PolicyInput['tiers'];
  const seed: PolicyInput = { tiers, models, tenants: {}, accounts: {}, defaults: defaultLimits };
  parsePolicy(seed);
  return seed;
}

/** The longest the edge holds a sync or stream client: a margin below the function's timeout. */
export function edgeMaxSyncWaitMs(functionTimeoutSeconds: number): number {
  return Math.max(1, functionTimeoutSeconds - 10) * 1000;
}
