import { describe, expect, it } from 'vitest';
import { effectiveDeadline, pausedMs } from '../../../lib/dispatch/paused-time.js';
import type { Envelope } from '../../../lib/envelope.js';
import { setPaused } from '../../../lib/policy/edit.js';
import { parsePolicy, PAUSES_KEPT } from '../../../lib/policy/schema.js';
import { basePolicy } from '../policy/fixtures.js';

const policyWith = (edits: Array<[{ tenant: string } | { account: string }, boolean, number]>) => {
  let doc: unknown = basePolicy();
  for (const [who, paused, at] of edits) doc = setPaused(doc, who, paused, at);
  return parsePolicy(doc);
};

describe('paused time', () => {
  it('counts the pauses of the tenant and of the account within the wait, overlaps once', () => {
    const policy = policyWith([
      [{ tenant: 'acme' }, true, 1_000],
      [{ account: 'svc1' }, true, 1_500],
      [{ tenant: 'acme' }, false, 2_000],
      [{ account: 'svc1' }, false, 3_000],
      [{ tenant: 'acme' }, true, 5_000],
      [{ tenant: 'acme' }, false, 5_500],
    ]);
    // Waiting 0..10,000: paused 1,000..3,000 and 5,000..5,500.
    expect(pausedMs(policy, 'acme', 'svc1', 0, 10_000)).toBe(2_500);
    // Only the overlap with the wait counts.
    expect(pausedMs(policy, 'acme', 'svc1', 2_500, 5_200)).toBe(700);
    // Another tenant's pauses do not count.
    expect(pausedMs(policy, 'beta', 'b', 0, 10_000)).toBe(0);
  });

  it('a pause in force counts up to now', () => {
    const policy = policyWith([[{ account: 'rt' }, true, 4_000]]);
    expect(pausedMs(policy, 'acme', 'rt', 1_000, 9_000)).toBe(5_000);
  });

  it('a pause set by hand without its start covers the whole wait', () => {
    const doc = basePolicy();
    doc.tenants.acme = { paused: true };
    expect(pausedMs(parsePolicy(doc), 'acme', 'rt', 1_000, 9_000)).toBe(8_000);
  });

  it('moves the deadline later by the paused time, so only unpaused waiting counts', () => {
    const policy = policyWith([
      [{ tenant: 'acme' }, true, 2_000],
      [{ tenant: 'acme' }, false, 32_000],
    ]);
    const envelope = { tenant: 'acme', account: 'rt', enqueuedAt: 1_000, deadline: 11_000 } as Envelope;
    expect(effectiveDeadline(envelope, policy, 40_000)).toBe(41_000);
  });

  it('pausing twice keeps the first start; resuming twice records one pause; old pauses are dropped', () => {
    const twice = policyWith([
      [{ tenant: 'acme' }, true, 1_000],
      [{ tenant: 'acme' }, true, 2_000],
      [{ tenant: 'acme' }, false, 3_000],
      [{ tenant: 'acme' }, false, 4_000],
    ]);
    expect(twice.tenants.acme!.pauses).toEqual([{ from: 1_000, to: 3_000 }]);
    const edits: Array<[{ tenant: string }, boolean, number]> = [];
    for (let i = 0; i < PAUSES_KEPT + 5; i++)
      edits.push([{ tenant: 'acme' }, true, i * 10], [{ tenant: 'acme' }, false, i * 10 + 5]);
    expect(policyWith(edits).tenants.acme!.pauses).toHaveLength(PAUSES_KEPT);
  });
});
