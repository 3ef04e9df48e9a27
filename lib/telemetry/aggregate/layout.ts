/**
 * How the aggregate is laid out in the store, and what bounds its memory: every
 * key expires, every hash is capped. The bound is then a product of these
 * (buckets kept × fields per bucket, plus the capped registries), however many
 * tenants, accounts or requests pass; bench/aggregate-memory.ts measures it.
 * Traces are bounded the same way: trace buckets kept × ids per bucket × bytes
 * per id (TRACE_BOUND_BYTES), whatever the request rate.
 */
export const AGGREGATE = {
  /** Flow bucket width and the history step. */
  bucketMs: 1_000,
  flushMs: 500,
  /** "Bursting now" is measured over this window. */
  windowMs: 10_000,
  /** A flow bucket outlives the window by a few flushes. */
  flowTtlMs: 15_000,
  /** Tenant, account and model fields per flow bucket; more fold into the overflow field. */
  flowMaxFields: 2_000,
  historyMs: 5 * 60_000,
  historyTtlMs: 6 * 60_000 + 5_000,
  /** Tiers × series × 60 seconds fit with room. */
  historyMaxFields: 4_000,
  /** A LiteTopic nobody admits into or dispatches from for this long is forgotten. */
  depthTtlMs: 15 * 60_000,
  depthMaxFields: 5_000,
  /** An instance silent for this long is gone from the view. */
  instanceTtlMs: 10_000,
  maxInstances: 500,
  /**
   * Traces: one hash per traceBucketMs, a field per request id holding the steps written in that
   * bucket. A request that waits minutes has fields in several buckets; a read merges them. Past
   * traceMaxIds ids a bucket traces no new request (those it holds still append), and a field
   * past traceMaxBytes keeps its first step and its latest ones (a long wait's Suspends in between
   * are thinned): at a high request rate the first requests of each bucket are traced, and memory
   * stays bounded.
   */
  traceBucketMs: 60_000,
  /** How long a trace bucket is kept after its last write. */
  traceTtlMs: 10 * 60_000,
  traceMaxIds: 4_000,
  traceMaxBytes: 2_048,
  /** Steps one process gathers for one request between two flushes. */
  traceMaxSteps: 64,
  /** Bounds of what one process gathers between two flushes. */
  maxPendingFields: 20_000,
  maxPendingTraces: 5_000,
} as const;

/** Trace buckets alive at once: the current one and those written within the TTL. */
export const TRACE_BUCKETS_LIVE = Math.ceil(AGGREGATE.traceTtlMs / AGGREGATE.traceBucketMs) + 1;
/** The bound on what traces keep in values: buckets × ids × bytes per id (field names and overhead aside). */
export const TRACE_BOUND_BYTES = TRACE_BUCKETS_LIVE * AGGREGATE.traceMaxIds * AGGREGATE.traceMaxBytes;

/** What each instance publishes about itself at every flush. */
export interface InstanceRecord {
  readonly instance: string;
  readonly role: string;
  readonly at: number;
  /** When this instance last read its policy source, and a digest of the policy it holds. */
  readonly policyCheckedAt?: number;
  readonly policyDigest?: string;
  /** GPU slots this instance's dispatches hold, per model and tier. */
  readonly slots?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly pace?: Readonly<Record<string, number>>;
  readonly alerts?: readonly {
    readonly at: number;
    readonly alert: string;
    readonly key: string;
    readonly message: string;
    readonly repeats: number;
  }[];
}
