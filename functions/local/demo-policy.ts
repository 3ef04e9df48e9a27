import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { parsePolicy, type Policy } from '../../lib/policy/schema.js';

/** Keys of the demo accounts `npm start` prints. Local only: never deploy this policy. */
export const DEMO_KEYS = {
  realtime: 'sk-sluice-demo-realtime',
  batch: 'sk-sluice-demo-batch',
  other: 'sk-sluice-demo-other-tenant',
} as const;

export const DEMO_MODEL = 'sim-llm';

/** Two tenants, one simulated model: enough to see admission, pacing and isolation. */
export function demoPolicy(gpuBaseUrls: readonly string[], slots = 8): Policy {
  return parsePolicy({
    tiers: defaultTiers,
    defaults: defaultLimits,
    models: { [DEMO_MODEL]: { slots, upstreams: [...gpuBaseUrls], defaultMaxTokens: 128 } },
    tenants: { demo: {}, acme: {} },
    accounts: {
      'demo-app': { tenant: 'demo', tier: 'realtime', keyHashes: [hashApiKey(DEMO_KEYS.realtime)] },
      'demo-batch': { tenant: 'demo', tier: 'batch', keyHashes: [hashApiKey(DEMO_KEYS.batch)] },
      'acme-app': { tenant: 'acme', tier: 'realtime', keyHashes: [hashApiKey(DEMO_KEYS.other)] },
    },
  });
}
