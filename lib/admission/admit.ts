/**
 * Admission: turns "this account asks for this model with this many tokens" into
 * one RateStore call checking every limit at once (account x model, tenant x model,
 * tenant; requests and tokens; the LiteTopic's reservoir) and into the decision
 * the edge answers with.
 */
import { randomUUID } from 'node:crypto';
import { liteTopicName } from '../queue/lite-topic-name.js';
import { limitName } from './names.js';
import type { AccountRef } from '../policy/resolve.js';
import { resolveLimits, type ResolvedLimits } from '../policy/resolve.js';
import { activeReservations } from '../policy/reservations.js';
import type { Policy } from '../policy/schema.js';
import { own } from '../lookup.js';
import { reservoirKey, reservoirPlace, windowKey, type WindowScope } from '../store/keys.js';
import { FAIR_SHARE_REASON, fairShareMessage, fairShareRetryMs } from '../limits/fair-share.js';
import type { FairShareView } from './fair-share-view.js';
import type { AdmitDecision, RateStore, Unit, WindowLimit, WindowState } from '../store/types.js';

const MINUTE = 60_000;

export interface AdmissionRequest {
  readonly account: AccountRef;
  readonly model: string;
  readonly tokenEstimate: number;
  /** The edge's clock; only decides which booked bursts are active (windows use the store's time). */
  readonly now: number;
  /** Names the request's reservoir place; a fresh one when unset. */
  readonly id?: string;
}

export type Admission =
  | {
      readonly outcome: 'admit';
      readonly liteTopic: string;
      readonly windows: readonly WindowState[];
      /** Token windows charged, to reconcile after completion. */
      readonly charged: readonly { readonly key: string; readonly windowStart: number }[];
      /** The reservoir place taken (key and member, lib/store/keys.ts reservoirPlace): what leaveReservoir gives back. */
      readonly reservoirKey: string;
      /** Set when a limit is past the tier's warning ratio. */
      readonly warning?: string;
      /** Multiplier of the LiteTopic's pace: below 1 when a degrade tier is over its soft quota. */
      readonly paceFactor: number;
      /** Plain words for the slow-down, when there is one. */
      readonly degraded?: string;
    }
  | {
      readonly outcome: 'reject';
      readonly reason: RejectReason;
      readonly message: string;
      readonly retryAfterMs: number;
      readonly windows: readonly WindowState[];
    };

export type RejectReason =
  | `${'account-model' | 'tenant-model' | 'tenant'}:${Unit}`
  | 'reservoir'
  | 'fair-share'
  | 'account-paused'
  | 'tenant-paused'
  | 'request-too-large';

const PAUSED_RETRY_MS = 60_000;

/** Extra quota from the tenant's booked bursts active now. */
function bookedExtra(policy: Policy, request: AdmissionRequest) {
  const extra = { rpm: 0, tpm: 0, reservoir: 0 };
  for (const r of activeReservations(policy, request.account.account.tenant, request.model, request.now)) {
    extra.rpm += r.extra.rpm;
    extra.tpm += r.extra.tpm;
    extra.reservoir += r.extra.reservoir;
  }
  return extra;
}

type BookedExtra = ReturnType<typeof bookedExtra>;

export function windowLimits(
  policy: Policy,
  request: AdmissionRequest,
  limits: ResolvedLimits = resolveLimits(policy, request.account.account, request.model),
  extra: BookedExtra = bookedExtra(policy, request),
): WindowLimit[] {
  const { account } = request.account;
  const tier = own(policy.tiers, account.tier);
  // A degrade tier's own limits are soft: the store enforces only the hard cap above them.
  const accountFactor = tier?.overQuota === 'degrade' ? tier.hardCapFactor : 1;
  const scopes: Array<[WindowScope, { rpm?: number; tpm?: number }, number]> = [
    [
      { kind: 'account-model', tenant: account.tenant, account: request.account.id, model: request.model },
      limits.accountModel,
      accountFactor,
    ],
    [{ kind: 'tenant-model', tenant: account.tenant, model: request.model }, limits.tenantModel, 1],
    [{ kind: 'tenant', tenant: account.tenant }, limits.tenant, 1],
  ];
  const out: WindowLimit[] = [];
  for (const [scope, l, factor] of scopes) {
    if (l.rpm !== undefined) {
      out.push({
        key: windowKey(scope, 'requests', MINUTE),
        scope: scope.kind,
        unit: 'requests',
        limit: Math.floor((l.rpm + extra.rpm) * factor),
        windowMs: MINUTE,
        cost: 1,
      });
    }
    if (l.tpm !== undefined) {
      out.push({
        key: windowKey(scope, 'tokens', MINUTE),
        scope: scope.kind,
        unit: 'tokens',
        limit: Math.floor((l.tpm + extra.tpm) * factor),
        windowMs: MINUTE,
        cost: request.tokenEstimate,
      });
    }
  }
  return out;
}

/** The LiteTopic's reservoir: as set, or what its pace releases within the tier's maximum wait. */
export function reservoirSize(
  policy: Policy,
  request: AdmissionRequest,
  { accountModel }: ResolvedLimits = resolveLimits(policy, request.account.account, request.model),
): number {
  if (accountModel.reservoir !== undefined) return accountModel.reservoir;
  return Math.max(1, Math.floor((accountModel.rate * tierMaxWaitMs(policy, request.account.account.tier)) / 1000));
}

/** How long a request of `tier` may wait in its LiteTopic; the tier name comes from the policy's operator. */
function tierMaxWaitMs(policy: Policy, tier: string): number {
  return own(policy.tiers, tier)?.maxQueueWaitMs ?? 60_000;
}

/**
 * How far a degrade-tier account is past its soft quota, as a pace multiplier:
 * each doubling past the quota halves the pace, up to the tier's step limit.
 */
export function degradeFactor(softLimit: number, used: number, maxSteps: number): number {
  if (softLimit <= 0 || used <= softLimit) return 1;
  const steps = Math.min(maxSteps, Math.ceil(Math.log2(used / softLimit)));
  return 1 / 2 ** steps;
}

/**
 * `shares`, when given, caps the LiteTopic's reservoir at the level its tier's flows are filled
 * to within the tier's maximum wait, while the tier is over-committed (lib/limits/fair-share.ts).
 */
export async function admit(
  store: RateStore,
  policy: Policy,
  request: AdmissionRequest,
  shares?: FairShareView,
): Promise<Admission> {
  const { account } = request.account;
  if (own(policy.tenants, account.tenant)?.paused) {
    return {
      outcome: 'reject',
      reason: 'tenant-paused',
      message: `Tenant ${account.tenant} is paused by an operator.`,
      retryAfterMs: PAUSED_RETRY_MS,
      windows: [],
    };
  }
  if (account.paused) {
    return {
      outcome: 'reject',
      reason: 'account-paused',
      message: `Account ${request.account.id} is paused by an operator.`,
      retryAfterMs: PAUSED_RETRY_MS,
      windows: [],
    };
  }
  // Resolved once per request: admission is the edge's hot path.
  const resolved = resolveLimits(policy, account, request.model);
  const extra = bookedExtra(policy, request);
  const limits = windowLimits(policy, request, resolved, extra);
  // A request larger than a whole window can never pass: say so instead of "retry later".
  const tooBig = limits.find((l) => l.cost > l.limit);
  if (tooBig) {
    return {
      outcome: 'reject',
      reason: 'request-too-large',
      message: `This request needs ${tooBig.cost} ${tooBig.unit} but the ${tooBig.scope} limit is ${tooBig.limit} per minute. Lower max_tokens or the prompt size.`,
      retryAfterMs: 0,
      windows: [],
    };
  }
  const liteTopic = liteTopicName({
    tier: account.tier,
    tenant: account.tenant,
    account: request.account.id,
    model: request.model,
  });
  const maxWaitMs = tierMaxWaitMs(policy, account.tier);
  const paced = reservoirSize(policy, request, resolved) + extra.reservoir;
  const share =
    own(policy.tiers, account.tier)?.fairShareAtAdmission === false
      ? undefined
      : await shares?.share(request.model, account.tier, request.now);
  const reservoir = {
    key: reservoirKey(account.tenant, liteTopic),
    max: share === undefined ? paced : Math.min(paced, share.cap),
    member: request.id ?? randomUUID(),
    // The place lapses with the request (its deadline is the tier's maximum wait), so a lost release heals itself.
    holdMs: maxWaitMs,
  };
  const decision: AdmitDecision = await store.admit({ limits, reservoir });
  if (!decision.allowed) {
    const denied = decision.deniedBy;
    if (!('unit' in denied) && share !== undefined && share.cap < paced) {
      const retryAfterMs = Math.max(decision.retryAfterMs, fairShareRetryMs(decision.queued, share));
      return {
        outcome: 'reject',
        reason: FAIR_SHARE_REASON,
        message: fairShareMessage(decision.queued, share, maxWaitMs, retryAfterMs),
        retryAfterMs,
        windows: decision.windows,
      };
    }
    const reason: RejectReason =
      'unit' in denied ? (limitName(denied.scope, denied.unit) as RejectReason) : 'reservoir';
    return {
      outcome: 'reject',
      reason,
      message: rejectMessage(reason, decision.retryAfterMs),
      retryAfterMs: decision.retryAfterMs,
      windows: decision.windows,
    };
  }
  const tier = own(policy.tiers, account.tier);
  const warnRatio = tier?.warnRatio ?? 1;
  const near = decision.windows.find((w) => w.limit > 0 && (w.limit - w.remaining) / w.limit >= warnRatio);
  let paceFactor = 1;
  let degraded: string | undefined;
  if (tier?.overQuota === 'degrade') {
    for (const w of decision.windows) {
      if (w.scope !== 'account-model') continue;
      const soft = w.limit / tier.hardCapFactor;
      const f = degradeFactor(soft, w.limit - w.remaining, tier.maxDegradeSteps);
      if (f < paceFactor) {
        paceFactor = f;
        degraded = `over the soft ${w.unit} quota (${Math.round(soft)} per minute): paced at 1/${Math.round(1 / f)}`;
      }
    }
  }
  return {
    paceFactor,
    degraded,
    outcome: 'admit',
    liteTopic,
    windows: decision.windows,
    charged: decision.windows.flatMap((w, i) =>
      w.unit === 'tokens' ? [{ key: limits[i]!.key, windowStart: w.windowStart }] : [],
    ),
    reservoirKey: reservoirPlace(reservoir.key, reservoir.member),
    warning: near
      ? `${near.scope} ${near.unit} at ${Math.round((100 * (near.limit - near.remaining)) / near.limit)}% of ${near.limit} per minute`
      : undefined,
  };
}

function rejectMessage(reason: RejectReason, retryAfterMs: number): string {
  const wait = `Retry after ${Math.ceil(retryAfterMs / 1000)} s.`;
  if (reason === 'reservoir') return `Too many requests are already waiting for this model. ${wait}`;
  const [scope, unit] = reason.split(':');
  const who =
    scope === 'account-model'
      ? 'this API key on this model'
      : scope === 'tenant-model'
        ? 'your organization on this model'
        : 'your organization';
  return `Rate limit reached for ${who}: ${unit} per minute. ${wait}`;
}
