import type { PolicyInput } from './schema.js';

/** The second seed's tiers: weights 6/2/1, reserved shares 60/25/15 %. */
export const defaultTiers: PolicyInput['tiers'] = {
  realtime: {
    weight: 6,
    share: 0.6,
    lendable: 0.5,
    overQuota: 'reject',
    warnRatio: 0.8,
    replyMode: 'sync',
    maxQueueWaitMs: 10_000,
  },
  batch: {
    weight: 2,
    share: 0.25,
    lendable: 0.5,
    overQuota: 'degrade',
    warnRatio: 0.8,
    replyMode: 'sync',
    maxQueueWaitMs: 5 * 60_000,
  },
  offline: {
    weight: 1,
    share: 0.15,
    lendable: 0.5,
    overQuota: 'degrade',
    warnRatio: 0.8,
    replyMode: 'async',
    maxQueueWaitMs: 60 * 60_000,
  },
};

/**
 * The second seed's token bucket (burst 50, 10 per second) and generous windows.
 * No reservoir: each LiteTopic holds what its pace can release within its tier's
 * maximum queue wait (realtime 100, batch 3,000, offline 36,000 at 10/s).
 */
export const defaultLimits: PolicyInput['defaults'] = {
  accountModel: { rpm: 600, tpm: 200_000, rate: 10, burst: 50 },
  tenantModel: { rpm: 3_000, tpm: 1_000_000 },
  tenant: { rpm: 6_000, tpm: 2_000_000 },
};
