import { describe, expect, it } from 'vitest';
import { upstashKeeper, withLastGoodPolicy, type PolicyKeeper } from '../../../functions/runtime/last-good-policy.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createPolicyHolder } from '../../../lib/policy/holder.js';
import { memorySource } from '../../../lib/policy/source.js';
import { captureLogger, policyWith } from '../../lib/telemetry/helpers.js';

function mapKeeper(): PolicyKeeper & { map: Map<string, string> } {
  const map = new Map<string, string>();
  return { map, get: async (k) => map.get(k) ?? null, set: async (k, v) => map.set(k, v) };
}

describe('a cold start on an invalid policy', () => {
  it('keeps each valid policy in the store', async () => {
    const keeper = mapKeeper();
    const good = policyWith(1);
    const source = withLastGoodPolicy(memorySource(good), keeper, 'k', captureLogger());
    expect(await source.load()).toEqual(good);
    expect(JSON.parse(keeper.map.get('k')!)).toEqual(JSON.parse(JSON.stringify(good)));
  });

  it('starts on the last good policy from the store, and raises the policy-invalid alert', async () => {
    const keeper = mapKeeper();
    const good = policyWith(2);
    await withLastGoodPolicy(memorySource(good), keeper, 'k', captureLogger()).load();
    // A new process: the source now holds a value the schema refuses.
    const log = captureLogger();
    const broken = withLastGoodPolicy(memorySource({ ...good, tiers: 'not a record' }), keeper, 'k', log);
    const holder = await createPolicyHolder({ source: broken, clock: new VirtualClock(0), log, refreshMs: 0 });
    expect(Object.keys(holder.current().tenants)).toEqual(Object.keys(good.tenants));
    expect(log.lines.some((l) => l.obj.alert === 'policy-invalid')).toBe(true);
    holder.close();
  });

  it('still fails when nothing good was ever kept', async () => {
    const source = withLastGoodPolicy(memorySource({ tiers: 1 }), mapKeeper(), 'k', captureLogger());
    await expect(source.load()).rejects.toThrow();
  });

  it('applies a valid policy even when the store cannot keep it', async () => {
    const keeper: PolicyKeeper = { get: async () => null, set: async () => Promise.reject(new Error('store down')) };
    const good = policyWith(1);
    expect(await withLastGoodPolicy(memorySource(good), keeper, 'k', captureLogger()).load()).toEqual(good);
  });

  it('reads raw strings from an Upstash client', async () => {
    const store = new Map<string, string>();
    const keeper = upstashKeeper({ get: async (k) => store.get(k) ?? null, set: async (k, v) => store.set(k, v) });
    await keeper.set('a', '{"x":1}');
    expect(await keeper.get('a')).toBe('{"x":1}');
    expect(await keeper.get('missing')).toBeNull();
  });
});
