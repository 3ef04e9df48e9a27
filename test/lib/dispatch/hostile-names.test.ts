/** An envelope naming an Object.prototype member is "no longer in the policy", never a crash or a prototype read. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createDispatcher } from '../../../lib/dispatch/dispatcher.js';
import { encodeEnvelope, type Envelope } from '../../../lib/envelope.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { createEmbeddedResults } from '../../../lib/results/embedded.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import type { UpstreamClient } from '../../../lib/upstream/client.js';
import { basePolicy } from '../policy/fixtures.js';

const NAMES = [...new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__'])];

describe('dispatcher lookups', () => {
  it.each(['model', 'account', 'tenant'] as const)('an envelope whose %s is a prototype name fails for good with 404 or is served as its real tenant', async (field) => {
    const clock = new VirtualClock(1_000_000);
    const policy = parsePolicy(basePolicy());
    const results = createEmbeddedResults({ clock });
    let upstreamCalls = 0;
    const upstream: UpstreamClient = {
      call: async () => (upstreamCalls++, { status: 200, json: {} }),
      stream: async () => (upstreamCalls++, { status: 200, json: undefined }),
      close: async () => {},
    };
    const dispatch = createDispatcher({
      clock, store: createEmbeddedStore(clock), results, upstream, policy: () => policy, log: silentLogger, newId: () => 'lease',
    });
    for (const name of NAMES) {
      const envelope: Envelope = {
        id: `req_${field}_${name}`, account: 'rt', tenant: 'acme', tier: 'realtime', model: 'm', liteTopic: 'realtime-acme-m',
        operation: 'chat.completions', body: { model: 'm', messages: [] }, mode: 'sync', enqueuedAt: clock.now(),
        deadline: clock.now() + 10_000, tokenEstimate: 1, charged: [], paceFactor: 1, [field]: name,
      };
      const result = await dispatch({ messageId: envelope.id, liteTopic: envelope.liteTopic, body: encodeEnvelope(envelope), attempt: 1 });
      expect(result.kind, name).toBe('success');
      const stored = await results.get(envelope.id);
      // A tenant name that is not the account's own reads no pause from the prototype: served like any other.
      if (field === 'tenant') expect(stored, name).toMatchObject({ status: 'completed', httpStatus: 200 });
      else expect(stored, name).toMatchObject({ status: 'failed', httpStatus: 404 });
    }
    expect(upstreamCalls).toBe(field === 'tenant' ? NAMES.length : 0);
  });
});
