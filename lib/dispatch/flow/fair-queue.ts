/**
 * One tier's waiting requests, served fair by tokens: the tenant that has been
 * served the fewest tokens goes next, within it the account served the fewest,
 * within that account the earliest deadline (start-time fair queuing with a
 * virtual token counter per tenant and per account, as in Kubernetes APF and
 * llm-d flow control). A start charges the request's token estimate; its
 * completion charges the difference to what it really used.
 *
 * A flow that was idle comes back at the tier's virtual time (the counter of
 * the flow served last), not at its old count: it cannot save up credit while
 * it sends nothing and then take the tier over.
 *
 * The queue holds what one dispatcher holds, a bounded few dozen requests, so
 * picking scans instead of keeping heaps.
 */

export interface FlowKey {
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
}

export interface Waiter<T> {
  readonly key: FlowKey;
  /** Past this instant the request is answered `expired`. */
  readonly deadline: number;
  /** Tokens charged when it starts. */
  readonly estimate: number;
  /** Arrival order: the tie-break of equal deadlines. */
  readonly seq: number;
  readonly value: T;
}

interface Counter {
  vt: number;
}

interface AccountFlow<T> extends Counter {
  readonly items: Waiter<T>[];
}

interface TenantFlow<T> extends Counter {
  readonly accounts: Map<string, AccountFlow<T>>;
  waiting: number;
  /** Counter of its account started last. */
  accountTime: number;
}

const FORGET_AFTER = 1024;

/**
 * How many requests a flow may be ahead of the least served and still go first for a pressed
 * deadline. Without it, with max_tokens omitted (realtime's calls ran 5-20 s, under-ask.test.ts's
 * trace), a realtime tenant one request ahead waited in a surge behind every later arrival of the
 * others until it expired. One, not two: with sent-back holds (a variant not taken), two took
 * seed2-burst's realtime wait p99 (small, seed 1) from 738 to 1,020 ms.
 */
export const PRESSED_LAG_ESTIMATES = 1;

export class TierQueue<T> {
  private readonly tenants = new Map<string, TenantFlow<T>>();
  /** Counter of the flow started last: where a returning flow starts. */
  private virtualTime = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(w: Waiter<T>): void {
    if (this.tenants.size > FORGET_AFTER) this.forgetIdle();
    let tenant = this.tenants.get(w.key.tenant);
    if (!tenant)
      this.tenants.set(
        w.key.tenant,
        (tenant = { vt: this.virtualTime, accounts: new Map(), waiting: 0, accountTime: 0 }),
      );
    tenant.vt = resumesAt(tenant, tenant.waiting > 0, this.virtualTime);
    let account = tenant.accounts.get(w.key.account);
    if (!account) tenant.accounts.set(w.key.account, (account = { vt: tenant.accountTime, items: [] }));
    account.vt = resumesAt(account, account.items.length > 0, tenant.accountTime);
    account.items.push(w);
    tenant.waiting++;
    this.count++;
  }

  /**
   * The request that goes next, or undefined when none waits. With `rank`, the
   * next is the lowest ranked of the flows' earliest-deadline requests whose
   * tenant and account are served at most one request (the strict pick's
   * estimate) more than the least served; ties keep the strict order. The
   * counters still charge every start, so the order bends by one request at most
   * and fairness over time is unchanged.
   *
   * With `pressedBy`, when that pick's deadline is later (it can wait), a request
   * due at or before it goes first, the earliest such deadline, if its tenant and
   * account are served at most PRESSED_LAG_ESTIMATES requests more than the least
   * served: deadlines come first while the flows are near even. A tenant that ran
   * far ahead (a flood) stays behind the others however close its deadlines come,
   * and where every pick is pressed (a long overload) the order is the fair one.
   */
  peek(rank?: (w: Waiter<T>) => number, pressedBy?: number): Waiter<T> | undefined {
    const tenant = least(this.tenants.values(), (t) => t.waiting > 0);
    if (!tenant) return undefined;
    const account = least(tenant.accounts.values(), (a) => a.items.length > 0)!;
    const strict = earliest(account);
    const pick = rank ? this.ranked(tenant.vt, strict, rank) : strict;
    if (pressedBy === undefined || pick.deadline <= pressedBy) return pick;
    return this.earliestPressed(tenant.vt, strict.estimate, pressedBy) ?? pick;
  }

  /** The lowest ranked of the flows within one request (the strict pick's estimate) of the least served. */
  private ranked(leastVt: number, strict: Waiter<T>, rank: (w: Waiter<T>) => number): Waiter<T> {
    let best = strict;
    let bestRank = rank(strict);
    for (const w of this.nearLeast(leastVt, () => strict.estimate)) {
      if (w === strict) continue;
      const r = rank(w);
      if (r < bestRank) ((best = w), (bestRank = r));
    }
    return best;
  }

  /**
   * Of the flows near the least served, the earliest deadline at or before `by`. Near: ahead of
   * the least served by at most PRESSED_LAG_ESTIMATES requests, each the larger of the fair
   * pick's estimate and the pressed request's own.
   */
  private earliestPressed(leastVt: number, pickEstimate: number, by: number): Waiter<T> | undefined {
    let best: Waiter<T> | undefined;
    const lag = (w: Waiter<T>) => PRESSED_LAG_ESTIMATES * Math.max(pickEstimate, w.estimate);
    for (const w of this.nearLeast(leastVt, lag)) if (w.deadline <= by && (!best || sooner(w, best))) best = w;
    return best;
  }

  /**
   * Each flow's earliest-deadline request whose tenant is at most `lag` of it ahead of the least
   * served tenant (`leastVt`), and whose account at most that ahead of its tenant's least served.
   */
  private *nearLeast(leastVt: number, lag: (w: Waiter<T>) => number): Generator<Waiter<T>> {
    for (const t of this.tenants.values()) {
      if (t.waiting === 0) continue;
      const leastAccount = least(t.accounts.values(), (a) => a.items.length > 0)!;
      for (const a of t.accounts.values()) {
        if (a.items.length === 0) continue;
        const w = earliest(a);
        const ahead = lag(w);
        if (t.vt <= leastVt + ahead && a.vt <= leastAccount.vt + ahead) yield w;
      }
    }
  }

  /**
   * Takes `w` out to start it, charging its estimate to its tenant and account. False when
   * it was no longer here (expired or handed back while its slot was being acquired).
   */
  start(w: Waiter<T>): boolean {
    const tenant = this.tenants.get(w.key.tenant);
    const account = tenant?.accounts.get(w.key.account);
    if (!tenant || !account || !this.remove(w)) return false;
    this.virtualTime = Math.max(this.virtualTime, tenant.vt);
    tenant.accountTime = Math.max(tenant.accountTime, account.vt);
    tenant.vt += w.estimate;
    account.vt += w.estimate;
    return true;
  }

  /** Takes `w` out without charging anything (expired, evicted, handed back). */
  remove(w: Waiter<T>): boolean {
    const tenant = this.tenants.get(w.key.tenant);
    const account = tenant?.accounts.get(w.key.account);
    const i = account?.items.indexOf(w) ?? -1;
    if (!tenant || !account || i < 0) return false;
    account.items.splice(i, 1);
    tenant.waiting--;
    this.count--;
    return true;
  }

  /** Charges what a finished request used beyond (or below) its estimate. */
  correct(key: FlowKey, delta: number): void {
    const tenant = this.tenants.get(key.tenant);
    if (!tenant) return;
    tenant.vt += delta;
    const account = tenant.accounts.get(key.account);
    if (account) account.vt += delta;
  }

  /**
   * The waiters fair order starts before a request of `key` due at `deadline` would start, if
   * it arrived now: of another tenant, those whose turn (its counter plus what starts before
   * them, earliest deadline first) comes before this tenant's counter; of another account of
   * this tenant, the same by the accounts' counters; of its own account, those due no later.
   */
  *aheadOf(key: FlowKey, deadline: number): IterableIterator<Waiter<T>> {
    const own = this.tenants.get(key.tenant);
    const tenantAt = resumesAt(own, (own?.waiting ?? 0) > 0, this.virtualTime);
    const ownAccount = own?.accounts.get(key.account);
    const accountAt = resumesAt(ownAccount, (ownAccount?.items.length ?? 0) > 0, own?.accountTime ?? 0);
    for (const [name, tenant] of this.tenants) {
      if (tenant.waiting === 0) continue;
      if (name !== key.tenant) {
        yield* turnsBefore(
          tenant.vt,
          [...tenant.accounts.values()].flatMap((a) => a.items),
          tenantAt,
        );
        continue;
      }
      for (const [accountName, account] of tenant.accounts) {
        if (accountName === key.account) yield* account.items.filter((w) => w.deadline <= deadline);
        else yield* turnsBefore(account.vt, account.items, accountAt);
      }
    }
  }

  /** Requests of this tenant and account waiting here. */
  waitingOf(key: FlowKey): number {
    return this.tenants.get(key.tenant)?.accounts.get(key.account)?.items.length ?? 0;
  }

  /**
   * The latest-due request of the account with the most waiting here, when it has more than
   * one: what gives up its place to a flow that has none (the scheduler's full room). Ties go
   * to the more served tenant, then account.
   */
  crowded(): Waiter<T> | undefined {
    let best: { tenant: TenantFlow<T>; account: AccountFlow<T> } | undefined;
    for (const tenant of this.tenants.values())
      for (const account of tenant.accounts.values()) {
        const n = account.items.length;
        if (n < 2) continue;
        const m = best?.account.items.length ?? 0;
        if (
          !best ||
          n > m ||
          (n === m && (tenant.vt > best.tenant.vt || (tenant === best.tenant && account.vt > best.account.vt)))
        )
          best = { tenant, account };
      }
    return best && latest(best.account);
  }

  /** Every waiter, for scans (deadline checks, eviction). */
  *waiters(): IterableIterator<Waiter<T>> {
    for (const t of this.tenants.values()) for (const a of t.accounts.values()) yield* a.items;
  }

  private forgetIdle(): void {
    for (const [name, t] of this.tenants) if (t.waiting === 0 && t.vt <= this.virtualTime) this.tenants.delete(name);
  }
}

/** Due first: the earlier deadline, then the earlier arrival. */
function sooner<T>(a: Waiter<T>, b: Waiter<T>): boolean {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.seq < b.seq);
}

/** A flow's earliest deadline, arrival order breaking ties. */
function earliest<T>(account: AccountFlow<T>): Waiter<T> {
  let best = account.items[0]!;
  for (const w of account.items) if (sooner(w, best)) best = w;
  return best;
}

/**
 * A flow's counter when its next request arrives: where it stands while it has work waiting;
 * idle (or new), no lower than `floor`, the counter of the flow started last, so it cannot
 * save up credit.
 */
function resumesAt(flow: Counter | undefined, waiting: boolean, floor: number): number {
  return flow && waiting ? flow.vt : Math.max(flow?.vt ?? floor, floor);
}

/** Of a flow's waiters from counter `vt` on, earliest deadline first, those that start before `at`. */
function turnsBefore<T>(vt: number, items: readonly Waiter<T>[], at: number): Waiter<T>[] {
  const ahead: Waiter<T>[] = [];
  let turn = vt;
  for (const w of [...items].sort((a, b) => a.deadline - b.deadline || a.seq - b.seq)) {
    if (turn >= at) break;
    ahead.push(w);
    turn += w.estimate;
  }
  return ahead;
}

/** A flow's latest deadline, the later arrival breaking ties: the last its order would serve. */
function latest<T>(account: AccountFlow<T>): Waiter<T> {
  let best = account.items[0]!;
  for (const w of account.items) if (sooner(best, w)) best = w;
  return best;
}

function least<C extends Counter>(items: Iterable<C>, eligible: (c: C) => boolean): C | undefined {
  let best: C | undefined;
  for (const c of items) if (eligible(c) && (best === undefined || c.vt < best.vt)) best = c;
  return best;
}
