/**
 * The aggregate's keys and fields, built here only. Aggregate keys share the
 * `{agg}` hash tag (one Redis Cluster slot: a flush is one script call), trace
 * buckets included. Components are URI-encoded so no name can forge a field.
 */
const PREFIX = 'sluice:{agg}';
const part = (s: string) => encodeURIComponent(s);
export const unpart = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Admissions and refusals per tenant, account and model, in buckets of BUCKET_MS. */
export function flowKey(bucketStart: number): string {
  return `${PREFIX}:flow:${bucketStart}`;
}

/** Per-tier history, one hash per minute, a field per series and second. */
export function historyKey(minuteStart: number): string {
  return `${PREFIX}:hist:${minuteStart}`;
}

/** Requests waiting per LiteTopic, deployment-wide: the edge adds, the dispatchers take away. */
export const DEPTH_KEY = `${PREFIX}:depth`;
/** The live instances and what each last said of itself (role, policy refresh, gauges, alerts). */
export const INSTANCES_KEY = `${PREFIX}:instances`;

/** The tenants named in metric labels during one period, decided once for the deployment. */
export function labelsKey(period: number): string {
  return `${PREFIX}:labels:${period}`;
}

/** Trace steps written during one bucket, a field per request id (fields.trace). */
export function traceKey(bucketStart: number): string {
  return `${PREFIX}:trace:${bucketStart}`;
}

export type FlowStat = 'admitted' | 'refused' | 'warned';

export const fields = {
  tenant: (tenant: string, stat: FlowStat) => `t|${part(tenant)}|${stat}`,
  account: (account: string, tenant: string, tier: string, stat: FlowStat) =>
    `a|${part(account)}|${part(tenant)}|${part(tier)}|${stat}`,
  model: (tier: string, model: string, stat: FlowStat) => `m|${part(tier)}|${part(model)}|${stat}`,
  history: (tier: string, series: string, second: number) => `${part(tier)}|${series}|${second}`,
  depth: (liteTopic: string, tier: string, tenant: string, model: string) =>
    `${part(liteTopic)}|${part(tier)}|${part(tenant)}|${part(model)}`,
  label: (tenant: string) => part(tenant),
  trace: (id: string) => part(id),
};

/** A field split back into its decoded parts. */
export function parts(field: string): string[] {
  return field.split('|').map(unpart);
}
