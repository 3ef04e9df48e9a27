import { describe, expect, it } from 'vitest';
import { own } from '../../../lib/lookup.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { resolveLimits } from '../../../lib/policy/resolve.js';
import { basePolicy } from './fixtures.js';

const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

describe('identifier lookups', () => {
  it('own() finds own entries only', () => {
    const record: Record<string, number> = { a: 1 };
    expect(own(record, 'a')).toBe(1);
    for (const name of NAMES) expect(own(record, name)).toBeUndefined();
    expect(own(undefined, 'a')).toBeUndefined();
  });

  it('a parsed policy has no prototype members in any record, even by plain index', () => {
    const policy = parsePolicy(basePolicy());
    for (const name of NAMES) {
      for (const record of [
        policy.tiers,
        policy.models,
        policy.tenants,
        policy.accounts,
        policy.tenants.acme!.models,
      ]) {
        expect((record as Record<string, unknown>)[name], name).toBeUndefined();
      }
    }
    // Entries that exist are still found.
    expect(policy.models.m?.slots).toBe(8);
  });

  it('a prototype name is refused as the name of a tier, model, tenant or account', () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      for (const section of ['tiers', 'models', 'tenants', 'accounts'] as const) {
        const doc = basePolicy() as unknown as Record<string, Record<string, unknown>>;
        doc[section] = { ...doc[section], [name]: Object.values(doc[section]!)[0] };
        expect(() => parsePolicy(doc), `${section}.${name}`).toThrow(/reserved/);
      }
    }
  });

  it('a model that is absent resolves to the defaults, not to a member of Object.prototype', () => {
    const policy = parsePolicy(basePolicy());
    expect(resolveLimits(policy, policy.accounts.svc1!, 'toString').accountModel.rpm).toBe(
      policy.defaults.accountModel.rpm,
    );
  });
});
