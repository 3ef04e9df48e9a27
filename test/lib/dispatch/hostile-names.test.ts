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
  it.each(['model', 'account', 'tenant'] as const)(
    'an envelope whose %s is a prototype name fails for good with 404 or is served as its real tenant',
    async (field) => {
      const clock = new VirtualClock(1_000_000);
      const policy = parsePolicy(basePolicy());
      const results = createEmbeddedResults({ clock });
      let upstreamCalls = 0;
      const upstream: UpstreamClient = {
        call: async () => (upstreamCalls++, { status: 200, json: {} }),
        stream: async () => (upstreamCalls++, { status: 200, json: undefined }),
        metrics: async () => '',
        close: async () => {},
      };
      const dispatch = createDispatcher({
        clock,
        store: createEmbeddedStore(clock),
        results,
        upstream,
        policy: () => policy,
        log: silentLogger,
        newId: () => 'lease',
      });
      for (const name of NAMES) {
        const envelope: Envelope = {
          id: `req_${field}_${name}`,
          account: 'rt',
          tenant: 'acme',
          tier: 'realtime',
          model: 'm',
          liteTopic: 'realtime-acme-m',
          operation: 'chat.completions',
          body: { model: 'm', messages: [] },
          mode: 'sync',
          // Past the grace a newer policy gets to reach this dispatcher.
          enqueuedAt: clock.now() - 121_000,
          deadline: clock.now() + 10_000,
          tokenEstimate: 1,
          charged: [],
          paceFactor: 1,
          [field]: name,
        };
        const result = await dispatch({
          messageId: envelope.id,
          liteTopic: envelope.liteTopic,
          body: encodeEnvelope(envelope),
          attempt: 1,
        });
        expect(result.kind, name).toBe('success');
        const stored = await results.get(envelope.id);
        // A tenant name that is not the account's own reads no pause from the prototype: served like any other.
        if (field === 'tenant') expect(stored, name).toMatchObject({ status: 'completed', httpStatus: 200 });
        else expect(stored, name).toMatchObject({ status: 'failed', httpStatus: 404 });
      }
      expect(upstreamCalls).toBe(field === 'tenant' ? NAMES.length : 0);
    },
  );
});

describe('an envelope admitted under a policy the dispatcher has not loaded yet', () => {
  it('waits for the refresh instead of failing, and is served once the account is known', async () => {
    const clock = new VirtualClock(1_000_000);
    const older = basePolicy();
    const newer = basePolicy();
    const account = Object.keys(newer.accounts)[0]!;
    delete (older.accounts as Record<string, unknown>)[account];
    let policy = parsePolicy(older);
    const results = createEmbeddedResults({ clock });
    const upstream: UpstreamClient = {
      call: async () => ({ status: 200, json: {} }),
      stream: async () => ({ status: 200, json: undefined }),
      metrics: async () => '',
      close: async () => {},
    };
    const dispatch = createDispatcher({
      clock,
      store: createEmbeddedStore(clock),
      results,
      upstream,
      policy: () => policy,
      log: silentLogger,
      newId: () => 'lease',
    });
    const a = parsePolicy(newer).accounts[account]!;
    const envelope: Envelope = {
      id: 'req_new_account',
      account,
      tenant: a.tenant,
      tier: a.tier,
      model: 'm',
      liteTopic: `${a.tier}-${a.tenant}-m`,
      operation: 'chat.completions',
      body: { model: 'm', messages: [] },
      mode: 'sync',
      enqueuedAt: clock.now(),
      deadline: clock.now() + 60_000,
      tokenEstimate: 1,
      charged: [],
      paceFactor: 1,
    };
    const message = {
      messageId: envelope.id,
      liteTopic: envelope.liteTopic,
      body: encodeEnvelope(envelope),
      attempt: 1,
    };
    expect((await dispatch(message)).kind).toBe('suspend');
    expect(await results.get(envelope.id)).toBeUndefined();
    policy = parsePolicy(newer);
    expect((await dispatch(message)).kind).toBe('success');
    expect(await results.get(envelope.id)).toMatchObject({ status: 'completed', httpStatus: 200 });
  });
});
