import { describe, expect, it } from 'vitest';
import { TierQueue, type Waiter } from '../../../../lib/dispatch/flow/fair-queue.js';

let seq = 0;
const waiter = (tenant: string, account: string, estimate: number, deadline = 1_000): Waiter<string> => ({
  key: { tier: 'batch', tenant, account },
  deadline,
  estimate,
  seq: ++seq,
  value: `${tenant}/${account}#${seq}`,
});

/** Starts `n` requests in the queue's order and counts the tokens each tenant got. */
function serve(q: TierQueue<string>, n: number): Record<string, number> {
  const got: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const w = q.peek();
    if (!w) break;
    q.start(w);
    got[w.key.tenant] = (got[w.key.tenant] ?? 0) + w.estimate;
  }
  return got;
}

describe('TierQueue: fair by tokens, then by deadline', () => {
  it('gives tenants equal tokens, not equal requests: a tenant asking 20x the tokens gets 1/20 the starts', () => {
    const q = new TierQueue<string>();
    for (let i = 0; i < 100; i++) q.push(waiter('small', 'a', 100));
    for (let i = 0; i < 100; i++) q.push(waiter('big', 'b', 2_000));
    const got = serve(q, 42);
    expect(Math.abs(got.small! - got.big!)).toBeLessThanOrEqual(2_000);
  });

  it("splits a tenant by account: one account's burst does not queue in front of its sibling", () => {
    const q = new TierQueue<string>();
    for (let i = 0; i < 50; i++) q.push(waiter('t', 'burst', 100));
    q.push(waiter('t', 'steady', 100));
    const order = [0, 1, 2].map(() => {
      const w = q.peek()!;
      q.start(w);
      return w.key.account;
    });
    expect(order).toContain('steady');
  });

  it('serves the earliest deadline first within a flow', () => {
    const q = new TierQueue<string>();
    q.push(waiter('t', 'a', 10, 3_000));
    const due = waiter('t', 'a', 10, 1_000);
    q.push(due);
    q.push(waiter('t', 'a', 10, 2_000));
    expect(q.peek()).toBe(due);
  });

  it("a flow coming back after idling starts at the tier's virtual time, with no saved-up credit", () => {
    const q = new TierQueue<string>();
    for (let i = 0; i < 30; i++) q.push(waiter('busy', 'a', 100));
    // "quiet" had one request served long ago, then idled while "busy" was served.
    q.push(waiter('quiet', 'q', 100));
    serve(q, 20);
    for (let i = 0; i < 10; i++) q.push(waiter('quiet', 'q', 100));
    const got = serve(q, 10);
    // Alternating from here on, not ten in a row for the newcomer.
    expect(got.quiet).toBeLessThanOrEqual(600);
    expect(got.busy).toBeGreaterThanOrEqual(400);
  });

  it('charges the correction at completion: a flow that used more than its estimate waits longer', () => {
    const q = new TierQueue<string>();
    for (let i = 0; i < 10; i++) q.push(waiter('x', 'a', 100));
    for (let i = 0; i < 10; i++) q.push(waiter('y', 'b', 100));
    const first = q.peek()!;
    q.start(first);
    q.correct(first.key, 900);
    const next = [0, 1, 2, 3, 4].map(() => {
      const w = q.peek()!;
      q.start(w);
      return w.key.tenant;
    });
    expect(next.filter((t) => t === first.key.tenant)).toHaveLength(0);
  });

  it('removes without charging, and reports its size', () => {
    const q = new TierQueue<string>();
    const a = waiter('t', 'a', 100);
    q.push(a);
    q.push(waiter('u', 'b', 100));
    expect(q.size).toBe(2);
    expect(q.remove(a)).toBe(true);
    expect(q.remove(a)).toBe(false);
    expect(q.size).toBe(1);
  });

  it('with a rank, picks the lowest ranked of the flows served within one request of the least, never one further ahead', () => {
    const q = new TierQueue<string>();
    const rank = (w: Waiter<string>) => (w.key.account === 'preferred' ? 0 : 1);
    // Same tenant, two accounts served alike: the ranked one goes first, though strict order picks `plain`.
    q.push(waiter('t', 'plain', 100));
    q.push(waiter('t', 'preferred', 100));
    expect(q.peek()!.key.account).toBe('plain');
    const first = q.peek(rank)!;
    expect(first.key.account).toBe('preferred');
    q.start(first);
    q.push(waiter('t', 'preferred', 100));
    // `preferred` is now one request ahead: still within the slack, so ties break by rank once more.
    expect(q.peek(rank)!.key.account).toBe('preferred');
    q.start(q.peek(rank)!);
    q.push(waiter('t', 'preferred', 100));
    // Two requests ahead: past the slack, the least served goes whatever its rank.
    expect(q.peek(rank)!.key.account).toBe('plain');
  });

  it('with a rank, tenants too are picked within one request of the least served, and equal ranks keep the strict order', () => {
    const q = new TierQueue<string>();
    q.push(waiter('a', 'x', 100));
    q.push(waiter('b', 'y', 100));
    const strict = q.peek()!;
    expect(q.peek(() => 0)).toBe(strict);
    const other = strict.key.tenant === 'a' ? 'b' : 'a';
    expect(q.peek((w) => (w.key.tenant === other ? 0 : 1))!.key.tenant).toBe(other);
  });

  it('a pressed deadline goes before a fair pick that can wait, while its flow is at most one request ahead', () => {
    const q = new TierQueue<string>();
    const served = (tenant: string) => {
      const w = waiter(tenant, tenant, 100);
      q.push(w);
      expect(q.start(w)).toBe(true);
    };
    served('ahead');
    q.push(waiter('ahead', 'ahead', 100, 500));
    q.push(waiter('even', 'e', 100, 900));
    q.push(waiter('even2', 'e2', 100, 400));
    // Fair order: the tenants served nothing go first (in arrival order), whatever the deadlines.
    expect(q.peek()!.key.tenant).toBe('even');
    // Pressed before 600: of the flows within one request of the least served, the earliest deadline.
    expect(q.peek(undefined, 600)!.deadline).toBe(400);
    q.remove(q.peek(undefined, 600)!);
    expect(q.peek()!.key.tenant).toBe('even');
    expect(q.peek(undefined, 600)!.key.tenant).toBe('ahead');
    // Nothing pressed: the fair order.
    expect(q.peek(undefined, 300)!.key.tenant).toBe('even');
    // The fair pick pressed too: it goes, as where every request waits near its deadline.
    expect(q.peek(undefined, 1_000)!.key.tenant).toBe('even');
  });

  it('a flow further ahead than one request waits its fair turn however close its deadline', () => {
    const q = new TierQueue<string>();
    // Served twice while `light` waited: two requests ahead of it.
    q.push(waiter('light', 'l', 100, 5_000));
    for (const w of [waiter('flood', 'f', 100), waiter('flood', 'f', 100)]) (q.push(w), q.start(w));
    q.push(waiter('flood', 'f', 100, 100));
    expect(q.peek(undefined, 1_000)!.key.tenant).toBe('light');
    // Its own larger estimate counts as the request it may be ahead by.
    const big = new TierQueue<string>();
    const first = waiter('big', 'b', 1_000);
    big.push(first);
    big.start(first);
    big.push(waiter('big', 'b', 1_000, 100));
    big.push(waiter('small', 's', 100, 5_000));
    expect(big.peek(undefined, 1_000)!.key.tenant).toBe('big');
  });
});

describe('TierQueue: what a full room gives up, and what waits ahead', () => {
  it('crowded: the latest-due request of the account with the most waiting, when it has two or more', () => {
    const q = new TierQueue<string>();
    q.push(waiter('lone', 'a', 10, 500));
    expect(q.crowded()).toBeUndefined();
    const early = waiter('crowd', 'c1', 10, 100);
    const late = waiter('crowd', 'c1', 10, 900);
    q.push(early);
    q.push(late);
    q.push(waiter('crowd', 'c2', 10, 950));
    expect(q.crowded()).toBe(late);
    expect(q.waitingOf({ tier: 'batch', tenant: 'crowd', account: 'c1' })).toBe(2);
    expect(q.waitingOf({ tier: 'batch', tenant: 'nobody', account: 'x' })).toBe(0);
  });

  it("aheadOf: another tenant's backlog counts only as far as fair order serves it first", () => {
    const q = new TierQueue<string>();
    // The crowd has been served: its counter is ahead of where an idle tenant comes back.
    for (let i = 0; i < 3; i++) q.push(waiter('crowd', 'c', 100, 100 + i));
    q.start(q.peek()!);
    for (let i = 0; i < 5; i++) q.push(waiter('crowd', 'c', 100, 200 + i));
    const newcomer = { tier: 'batch', tenant: 'steady', account: 's' };
    // Everything of the crowd is due earlier, and none of it goes before the newcomer.
    expect([...q.aheadOf(newcomer, 10_000)]).toEqual([]);
    // Its own account's earlier-due requests do.
    const mine = waiter('steady', 's', 50, 300);
    q.push(mine);
    expect([...q.aheadOf(newcomer, 10_000)]).toEqual([mine]);
    expect([...q.aheadOf(newcomer, 299)]).toEqual([]);
    // A tenant less served than the newcomer's goes first, for as long as its counter stays below.
    const two = new TierQueue<string>();
    for (let i = 0; i < 3; i++) two.push(waiter('heavy', 'h', 100, 100 + i));
    for (let i = 0; i < 3; i++) two.start(two.peek()!);
    two.push(waiter('heavy', 'h', 100, 500));
    // heavy's counter is 300; light comes in at the tier's virtual time (200) with three requests.
    const light = [0, 1, 2].map((i) => waiter('light', 'l', 100, 600 + i));
    for (const w of light) two.push(w);
    expect([...two.aheadOf({ tier: 'batch', tenant: 'heavy', account: 'h2' }, 10_000)]).toEqual([light[0]]);
  });
});
