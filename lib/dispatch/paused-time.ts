/**
 * Pause keeps its promise: work queued for a paused tenant or account waits without
 * ageing. A request expires once its waiting time that was not paused reaches its
 * tier's maximum, so its deadline moves later by the time it spent paused.
 */
import type { Envelope } from '../envelope.js';
import { own } from '../lookup.js';
import type { Policy } from '../policy/schema.js';

/** Time within [since, now] during which the tenant or the account was paused; overlapping pauses count once. */
export function pausedMs(policy: Policy, tenant: string, account: string, since: number, now: number): number {
  const spans: Array<[number, number]> = [];
  for (const entry of [own(policy.tenants, tenant), own(policy.accounts, account)]) {
    if (!entry) continue;
    for (const p of entry.pauses) spans.push([p.from, p.to]);
    // A pause set by hand, without its start, is taken to cover the whole wait so far.
    if (entry.paused) spans.push([entry.pausedAt ?? since, now]);
  }
  const clipped = spans
    .map(([from, to]): [number, number] => [Math.max(from, since), Math.min(to, now)])
    .filter(([from, to]) => to > from)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [from, to] of clipped) {
    if (to <= end) continue;
    total += to - Math.max(from, end);
    end = to;
  }
  return total;
}

/** The instant the request expires: its deadline, later by the time it has spent paused so far. */
export function effectiveDeadline(envelope: Envelope, policy: Policy, now: number): number {
  return envelope.deadline + pausedMs(policy, envelope.tenant, envelope.account, envelope.enqueuedAt, now);
}
