import { describe, expect, it } from 'vitest';
import { own } from '../../../lib/policy/lookup.js';
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
      for (const record of [policy.tiers, policy.models, policy.tenants, policy.accounts, policy.tenants.acme!.models]) {
        expect((record as Record<string, unknown>)[name], name).toBeUndefined();
      }
    }
    // Entries that exist are still found.
    expect(policy.models.m?.slots).toBe(8);
  });

  it('a tenant or model named like a prototype member is a real entry when the policy has one', () => {
    const doc = basePolicy();
    doc.tenants = { ...doc.tenants, constructor: { limits: { rpm: 7 } } };
    doc.accounts = { ...doc.accounts, c: { tenant: 'constructor', tier: 'realtime', keyHashes: ['0'.repeat(64)] } };
    const policy = parsePolicy(doc);
    expect(resolveLimits(policy, policy.accounts.c!, 'm').tenant.rpm).toBe(7);
    // And one that is absent resolves to the defaults, not to Object.prototype's members.
    expect(resolveLimits(policy, policy.accounts.svc1!, 'toString').accountModel.rpm).toBe(policy.defaults.accountModel.rpm);
  });
});
