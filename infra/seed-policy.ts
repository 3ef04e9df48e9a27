/**
 * The policy the Config stack seeds into SSM on first deploy: the schema's defaults
 * (lib/policy/defaults.ts — seed 2's tiers 6/2/1 with shares 60/25/15 %, token bucket
 * burst 50 refilled 10/s), one model per configured GPU endpoint group, no tenants or
 * accounts yet (operators add them with `aws ssm put-parameter`, see infra/README.md).
 * It is validated with the schema at synth, so a bad seed never reaches SSM.
 */
import { defaultLimits, defaultTiers } from '../lib/policy/defaults.js';
import { parsePolicy, type PolicyInput } from '../lib/policy/schema.js';

/** Slots assumed per model until the operator sets the real capacity. */
const DEFAULT_SLOTS = 8;

/**
 * `syncWaitLimitMs`: CloudFront's origin read timeout. A tier whose requests may wait in the
 * queue that long with no byte sent is seeded async (202 and a status URL): answered sync, the
 * client would get CloudFront's 504 while its request still runs.
 */
export function seedPolicy(gpuEndpoints: Record<string, string[]>, options: { syncWaitLimitMs?: number } = {}): PolicyInput {
  const models: PolicyInput['models'] = {};
  for (const [model, upstreams] of Object.entries(gpuEndpoints)) models[model] = { slots: DEFAULT_SLOTS, upstreams };
  const limit = options.syncWaitLimitMs;
  const tiers = Object.fromEntries(
    Object.entries(defaultTiers).map(([name, t]) => {
      const tier = t as { replyMode?: string; maxQueueWaitMs?: number };
      const tooLong = limit !== undefined && tier.replyMode === 'sync' && (tier.maxQueueWaitMs ?? Number.POSITIVE_INFINITY) >= limit;
      return [name, tooLong ? { ...t, replyMode: 'async' } : t];
    }),
  ) as PolicyInput['tiers'];
  const seed: PolicyInput = { tiers, models, tenants: {}, accounts: {}, defaults: defaultLimits };
  parsePolicy(seed);
  return seed;
}
