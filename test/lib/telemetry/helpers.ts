import type { DispatchEvent } from '../../../lib/dispatch-events.js';
import type { Envelope } from '../../../lib/envelope.js';
import { defaultLimits, defaultTiers } from '../../../lib/policy/defaults.js';
import { hashApiKey } from '../../../lib/policy/resolve.js';
import { parsePolicy, type Policy } from '../../../lib/policy/schema.js';
import { liteTopicName } from '../../../lib/queue/lite-topic-name.js';
import type { CounterName, HistogramName, Labels, MetricSink } from '../../../lib/telemetry/catalog.js';
import type { Logger } from '../../../lib/telemetry/log.js';
import type { AdmissionInfo } from '../../../lib/telemetry/telemetry.js';

/** Tenants t0..t{n-1}, each with a realtime account `a-tK` and a batch account `b-tK`, on model `m` (10 slots). */
export function policyWith(tenants = 3, overrides: Record<string, unknown> = {}): Policy {
  const t: Record<string, object> = {};
  const accounts: Record<string, object> = {};
  for (let i = 0; i < tenants; i++) {
    t[`t${i}`] = {};
    accounts[`a-t${i}`] = { tenant: `t${i}`, tier: 'realtime', keyHashes: [hashApiKey(`k-a-${i}`)] };
    accounts[`b-t${i}`] = { tenant: `t${i}`, tier: 'batch', keyHashes: [hashApiKey(`k-b-${i}`)] };
  }
  return parsePolicy({
    tiers: defaultTiers,
    defaults: defaultLimits,
    models: { m: { slots: 10, upstreams: ['http://127.0.0.1:9/v1'] } },
    tenants: t,
    accounts,
    ...overrides,
  });
}

export interface LoggedLine {
  level: string;
  obj: Record<string, unknown>;
  msg?: string;
}

export function captureLogger(): Logger & { lines: LoggedLine[] } {
  const lines: LoggedLine[] = [];
  const at = (level: string) => (obj: object, msg?: string) =>
    void lines.push({ level, obj: obj as Record<string, unknown>, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** A sink that records every observation, for assertions. */
export function recordingSink(): MetricSink & {
  counts: Array<{ name: CounterName; labels: Labels; value: number }>;
  observations: Array<{ name: HistogramName; labels: Labels; ms: number }>;
  total(name: CounterName, match?: Partial<Labels>): number;
} {
  const counts: Array<{ name: CounterName; labels: Labels; value: number }> = [];
  const observations: Array<{ name: HistogramName; labels: Labels; ms: number }> = [];
  return {
    counts,
    observations,
    count(name, labels, value) {
      counts.push({ name, labels, value });
    },
    observe(name, labels, ms) {
      observations.push({ name, labels, ms });
    },
    total(name, match = {}) {
      return counts
        .filter((c) => c.name === name && Object.entries(match).every(([k, v]) => c.labels[k] === v))
        .reduce((s, c) => s + c.value, 0);
    },
  };
}

let seq = 0;
export function envelope(tenant: string, tier = 'realtime', enqueuedAt = 0, model = 'm'): Envelope {
  const account = `${tier === 'realtime' ? 'a' : 'b'}-${tenant}`;
  return {
    id: `r${++seq}`,
    account,
    tenant,
    tier,
    model,
    liteTopic: liteTopicName({ tier, tenant, account, model }),
    operation: 'chat.completions',
    body: {},
    mode: 'sync',
    enqueuedAt,
    deadline: enqueuedAt + 10_000,
    tokenEstimate: 10,
    charged: [],
    paceFactor: 1,
  } as Envelope;
}

export function admitted(e: Envelope, warning?: string): AdmissionInfo {
  return { outcome: 'admitted', account: e.account, tenant: e.tenant, tier: e.tier, model: e.model, id: e.id, warning };
}

export function refused(tenant: string, reason: string, tier = 'realtime'): AdmissionInfo {
  return {
    outcome: 'rejected',
    account: `${tier === 'realtime' ? 'a' : 'b'}-${tenant}`,
    tenant,
    tier,
    model: 'm',
    id: `x${++seq}`,
    reason,
  };
}

export type { DispatchEvent };
