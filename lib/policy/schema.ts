/**
 * The policy: who may call, at what pace, on which models. One zod schema, so a
 * bad file or parameter is refused with a readable reason instead of half-applied.
 * Defaults reproduce the second seed: tier weights 6/2/1, reserved shares
 * 60/25/15 %, a token bucket of burst 50 refilled at 10 per second.
 */
import { z } from 'zod';
import { bare, own } from '../lookup.js';

/** Names Object.prototype answers to: never a tier, model, tenant or account, so no lookup can mistake one for the other. */
const PROTOTYPE_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * A tier, model, tenant or account name. Exported so whatever else names them (the lab's
 * traces) refuses what the policy would, with the same words.
 */
export const PolicyName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/, 'letters, digits and . _ : - only, at most 64')
  .refine((name) => !PROTOTYPE_NAMES.has(name), 'a name of Object.prototype (constructor, toString, ...) is reserved');

/** Limits that can be set at any level; what is unset is inherited. */
export const Limits = z
  .object({
    /** Requests per minute (fixed, clock-aligned window). */
    rpm: z.number().int().positive(),
    /** Tokens per minute: prompt estimate + max_tokens at admission, reconciled after. */
    tpm: z.number().int().positive(),
    /** Release pace of the LiteTopic, per second. */
    rate: z.number().positive(),
    /** Releases allowed back to back; 1 is a strict leaky bucket. */
    burst: z.number().int().positive(),
    /**
     * Most requests waiting in the LiteTopic. Unset: as many as its pace can release
     * within the tier's maximum queue wait (rate x maxQueueWaitMs) — more would only
     * expire, fewer would refuse work that could have been served.
     */
    reservoir: z.number().int().positive(),
  })
  .partial()
  .strict();
export type Limits = z.infer<typeof Limits>;

export const Tier = z
  .object({
    weight: z.number().positive(),
    /** Fraction of each model's slots reserved for the tier. */
    share: z.number().min(0).max(1),
    /**
     * Accepted so older policies still parse, but not read: flow control lends every idle
     * reserved slot (work-conserving), and a lender takes its slots back as soon as it asks.
     */
    lendable: z.number().min(0).max(1).default(0.5),
    overQuota: z.enum(['reject', 'degrade']),
    /** Fraction of a limit past which admissions carry a warning. */
    warnRatio: z.number().min(0).max(1).default(0.8),
    replyMode: z.enum(['sync', 'async']).default('sync'),
    /** Longest a request may wait in the queue before it is answered `expired`. */
    maxQueueWaitMs: z.number().int().positive(),
    /**
     * While the tier is over-committed, refuse at admission (429 `fair-share`) what its flow's
     * fair share of the model cannot start within maxQueueWaitMs, and shed from the LiteTopics
     * (answered the same way) what was admitted and no longer can (lib/limits/fair-share.ts).
     * False: such requests wait in their LiteTopic and are answered when the dispatcher finds
     * they cannot start in time, near their deadline in a flood from many accounts.
     */
    fairShareAtAdmission: z.boolean().default(true),
    /**
     * For `degrade` tiers: account limits are soft; past them the pace halves at each
     * step, and only this multiple of the limit is a hard cap (429).
     */
    hardCapFactor: z.number().min(1).default(3),
    /** For `degrade` tiers: most halvings of the pace (4 = down to 1/16). */
    maxDegradeSteps: z.number().int().min(0).max(10).default(4),
  })
  .strict();
export type Tier = z.infer<typeof Tier>;

/**
 * Slots taken from the model servers' own metrics (vLLM's Prometheus page) instead of
 * trusted as declared: `slots` is where it starts and what it falls back to when the
 * metrics cannot be read (lib/dispatch/flow/saturation.ts).
 */
export const Saturation = z
  .object({
    /** Fewest and most slots the servers' metrics may set; maxSlots unset: 4 x `slots`. */
    minSlots: z.number().int().positive().default(1),
    maxSlots: z.number().int().positive().optional(),
    /** Requests waiting inside the servers past which they hold more than they run. */
    queueDepthThreshold: z.number().int().min(0).default(0),
    /** KV-cache use (0..1, the fullest server's) past which a server is near preempting. */
    kvCacheThreshold: z.number().gt(0).max(1).default(0.8),
    /** How often the metrics are read while the model has work. */
    refreshMs: z.number().int().min(100).max(60_000).default(1_000),
    /** After the slots went down, how long before one more is tried: each try past the servers' size queues one request there. */
    probeAfterMs: z.number().int().min(0).max(600_000).default(30_000),
  })
  .strict();
export type Saturation = z.infer<typeof Saturation>;

export const Model = z
  .object({
    /** Concurrent generations the model's endpoints sustain together. */
    slots: z.number().int().positive(),
    /** Take the slots from the servers' metrics, starting at `slots`. */
    saturation: Saturation.optional(),
    /** OpenAI-compatible base URLs, e.g. http://gpu-1:8000/v1. */
    upstreams: z.array(z.string().url()).min(1),
    /** Name to send upstream when it differs from the public one. */
    upstreamModel: z.string().optional(),
    /** max_tokens assumed when a request does not say. */
    defaultMaxTokens: z.number().int().positive().default(256),
    /** Tokens per second the model sustains in all; bookings are checked against it. */
    tokensPerSecond: z.number().positive().optional(),
    /** Part of that capacity bookings may take at once. */
    bookableShare: z.number().min(0).max(1).default(0.5),
    /** Upstream latency past which congestion control slows the model down. */
    latencyTargetMs: z.number().int().positive().optional(),
    limits: Limits.optional(),
  })
  .strict()
  .refine(
    (m) => !m.saturation || (m.saturation.minSlots <= m.slots && m.slots <= (m.saturation.maxSlots ?? Infinity)),
    {
      message: 'saturation needs minSlots <= slots <= maxSlots: slots is where the metrics start from',
      path: ['saturation'],
    },
  );
export type Model = z.infer<typeof Model>;

/** A finished pause, ms since the epoch: queued work does not age while paused. */
export const Pause = z.object({ from: z.number().int().nonnegative(), to: z.number().int().nonnegative() }).strict();
export type Pause = z.infer<typeof Pause>;

/** Pauses remembered per tenant or account; older ones no longer overlap any queued request. */
export const PAUSES_KEPT = 16;

const pauseFields = {
  /** When the pause in force began (set by the admin API and the `sluice` command). */
  pausedAt: z.number().int().nonnegative().optional(),
  /** Recent finished pauses, oldest first. */
  pauses: z.array(Pause).max(PAUSES_KEPT).default([]),
};

export const Tenant = z
  .object({
    paused: z.boolean().default(false),
    ...pauseFields,
    /** Team-wide limits, across all its accounts and models. */
    limits: Limits.optional(),
    /** Team-wide limits per model. */
    models: z.record(PolicyName, Limits).default({}),
  })
  .strict();
export type Tenant = z.infer<typeof Tenant>;

export const Account = z
  .object({
    tenant: PolicyName,
    tier: PolicyName,
    /** SHA-256 (hex) of each API key; keys themselves are never stored. */
    keyHashes: z.array(z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 hex digest')).min(1),
    paused: z.boolean().default(false),
    ...pauseFields,
    /** Per model limits for this account. */
    limits: Limits.optional(),
  })
  .strict();
export type Account = z.infer<typeof Account>;

/** A booked burst: extra quota for a tenant (optionally one model) over a window of time. */
export const Reservation = z
  .object({
    id: PolicyName,
    tenant: PolicyName,
    /** Only this model; every model of the tenant when unset. */
    model: PolicyName.optional(),
    /** Start and end, ms since the epoch. */
    startsAt: z.number().int().nonnegative(),
    endsAt: z.number().int().positive(),
    /** Added to the tenant's and its accounts' windows, and to the reservoir, while active. */
    extra: z
      .object({
        rpm: z.number().int().nonnegative().default(0),
        tpm: z.number().int().nonnegative().default(0),
        reservoir: z.number().int().nonnegative().default(0),
      })
      .strict(),
    note: z.string().max(200).optional(),
  })
  .strict()
  .refine((r) => r.endsAt > r.startsAt, { message: 'endsAt must be after startsAt', path: ['endsAt'] });
export type Reservation = z.infer<typeof Reservation>;

export const Policy = z
  .object({
    tiers: z.record(PolicyName, Tier),
    models: z.record(PolicyName, Model),
    tenants: z.record(PolicyName, Tenant),
    accounts: z.record(PolicyName, Account),
    reservations: z.array(Reservation).default([]),
    /** Limits applied where nothing more specific is set. */
    defaults: z
      .object({
        accountModel: Limits.required({ rpm: true, tpm: true, rate: true, burst: true }),
        tenantModel: Limits.pick({ rpm: true, tpm: true }).required(),
        tenant: Limits.pick({ rpm: true, tpm: true }).required(),
      })
      .strict(),
  })
  .strict()
  .superRefine((p, ctx) => {
    for (const [name, a] of Object.entries(p.accounts)) {
      if (!own(p.tenants, a.tenant))
        ctx.addIssue({ code: 'custom', path: ['accounts', name, 'tenant'], message: `unknown tenant "${a.tenant}"` });
      if (!own(p.tiers, a.tier))
        ctx.addIssue({ code: 'custom', path: ['accounts', name, 'tier'], message: `unknown tier "${a.tier}"` });
    }
    p.reservations.forEach((r, i) => {
      if (!own(p.tenants, r.tenant))
        ctx.addIssue({ code: 'custom', path: ['reservations', i, 'tenant'], message: `unknown tenant "${r.tenant}"` });
      if (r.model && !own(p.models, r.model))
        ctx.addIssue({ code: 'custom', path: ['reservations', i, 'model'], message: `unknown model "${r.model}"` });
    });
    const shares = Object.values(p.tiers).reduce((s, t) => s + t.share, 0);
    if (shares > 1 + 1e-9)
      ctx.addIssue({ code: 'custom', path: ['tiers'], message: `tier shares add up to ${shares}, more than 1` });
  });
export type Policy = z.infer<typeof Policy>;
export type PolicyInput = z.input<typeof Policy>;

/** Parses a policy, or throws an Error whose message lists every problem by path. */
export function parsePolicy(input: unknown): Policy {
  const result = Policy.safeParse(input);
  if (result.success) return withBareRecords(result.data);
  // A refused record key says why in its inner issues ("Invalid key in record" alone names no rule).
  const reason = (i: z.core.$ZodIssue): string =>
    i.code === 'invalid_key' && i.issues.length > 0
      ? `${i.message}: ${i.issues.map((inner) => inner.message).join('; ')}`
      : i.message;
  const lines = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${reason(i)}`);
  throw new Error(`invalid policy:\n  ${lines.join('\n  ')}`);
}

/** Every record of a parsed policy without a prototype: a stray plain index still finds no Object.prototype member. */
function withBareRecords(p: Policy): Policy {
  const tenants = Object.fromEntries(
    Object.entries(p.tenants).map(([name, t]) => [name, { ...t, models: bare(t.models) }]),
  );
  return { ...p, tiers: bare(p.tiers), models: bare(p.models), tenants: bare(tenants), accounts: bare(p.accounts) };
}
