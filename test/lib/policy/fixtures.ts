import { defaultLimits, defaultTiers } from '../../../lib/policy/defaults.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import type { PolicyInput } from '../../../lib/policy/schema.js';

/** A fresh copy each call: tests mutate it. */
export function basePolicy(): PolicyInput {
  return structuredClone({
    tiers: defaultTiers,
    defaults: defaultLimits,
    models: { m: { slots: 8, upstreams: ['http://127.0.0.1:1/v1'], tokensPerSecond: 1000 } },
    tenants: { acme: {}, beta: {} },
    accounts: {
      svc1: { tenant: 'acme', tier: 'batch', keyHashes: [hashApiKey('k1')] },
      rt: { tenant: 'acme', tier: 'realtime', keyHashes: [hashApiKey('k2')] },
      b: { tenant: 'beta', tier: 'realtime', keyHashes: [hashApiKey('k3')] },
    },
  } satisfies PolicyInput);
}
