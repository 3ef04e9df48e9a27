/**
 * Answers "which limits apply to this account on this model", most specific first:
 * account, then model, then the policy defaults.
 */
import { createHash } from 'node:crypto';
import type { Account, Limits, Policy } from './schema.js';
import { own } from '../lookup.js';

export interface ResolvedLimits {
  readonly accountModel: Required<Omit<Limits, 'reservoir'>> & Pick<Limits, 'reservoir'>;
  readonly tenantModel: { readonly rpm?: number; readonly tpm?: number };
  readonly tenant: { readonly rpm?: number; readonly tpm?: number };
}

/**
 * rpm and tpm at tenant level are team-wide caps, counted across all accounts; an
 * account's own windows come from the account, the model or the defaults. rate,
 * burst and reservoir describe the account's own LiteTopic (tier + tenant + account +
 * model); a tenant may set them too, as what each of its accounts gets.
 */
export function resolveLimits(policy: Policy, account: Account, model: string): ResolvedLimits {
  const tenant = own(policy.tenants, account.tenant);
  const pick = ({ rate, burst, reservoir }: Limits = {}) => ({ rate, burst, reservoir });
  const defined = (l: Limits) => Object.fromEntries(Object.entries(l).filter(([, v]) => v !== undefined)) as Limits;
  return {
    accountModel: {
      ...policy.defaults.accountModel,
      ...own(policy.models, model)?.limits,
      ...defined(pick(tenant?.limits)),
      ...defined(pick(own(tenant?.models, model))),
      ...account.limits,
    },
    tenantModel: { ...policy.defaults.tenantModel, ...own(tenant?.models, model) },
    tenant: { ...policy.defaults.tenant, ...tenant?.limits },
  };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export interface AccountRef {
  readonly id: string;
  readonly account: Account;
}

/** Key-hash index, built once per policy version so authentication is one Map lookup. */
export function indexAccounts(policy: Policy): ReadonlyMap<string, AccountRef> {
  const index = new Map<string, AccountRef>();
  for (const [id, account] of Object.entries(policy.accounts)) {
    for (const hash of account.keyHashes) index.set(hash, { id, account });
  }
  return index;
}
