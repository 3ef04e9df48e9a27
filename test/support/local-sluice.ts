import { defaultLimits, defaultTiers } from '../../lib/policy/defaults.js';
import { hashApiKey } from '../../lib/policy/resolve.js';
import { parsePolicy, type PolicyInput } from '../../lib/policy/schema.js';
import { silentLogger } from '../../lib/telemetry/log.js';
import { startLocalSluice, type LocalSluiceOptions } from '../../functions/local/sluice.js';
import { systemClock } from '../../functions/runtime/system-clock.js';

export const KEYS = { a1: 'sk-test-a1', a2: 'sk-test-a2', b1: 'sk-test-b1', batch: 'sk-test-batch' } as const;

/** Tenants `ta` (accounts a1, a2, batch) and `tb` (b1) on one simulated model `m`. */
export function testPolicy(gpuBaseUrl: string, overrides: Partial<PolicyInput> = {}) {
  return parsePolicy({
    tiers: defaultTiers,
    defaults: defaultLimits,
    models: { m: { slots: 4, upstreams: [gpuBaseUrl], defaultMaxTokens: 16 } },
    tenants: { ta: {}, tb: {} },
    accounts: {
      a1: { tenant: 'ta', tier: 'realtime', keyHashes: [hashApiKey(KEYS.a1)] },
      a2: { tenant: 'ta', tier: 'realtime', keyHashes: [hashApiKey(KEYS.a2)] },
      batch: { tenant: 'ta', tier: 'batch', keyHashes: [hashApiKey(KEYS.batch)] },
      b1: { tenant: 'tb', tier: 'realtime', keyHashes: [hashApiKey(KEYS.b1)] },
    },
    ...overrides,
  });
}

/** A fast simulated GPU so tests spend milliseconds per request, not seconds. */
export const fastGpu = {
  models: ['m'],
  slots: 4,
  baseTokenMs: 1,
  prefillMsPerKToken: 1,
  minOutputTokens: 4,
  maxOutputTokens: 12,
};

export function startTestSluice(options: Partial<LocalSluiceOptions> & { overrides?: Partial<PolicyInput> } = {}) {
  return startLocalSluice({
    clock: systemClock,
    log: silentLogger,
    port: 0,
    gpu: fastGpu,
    policy: (url) => testPolicy(url, options.overrides),
    // Tests close with work still queued (paused tenants, slow paces): do not wait the default drain time.
    drainMs: 2_000,
    ...options,
  });
}

/**
 * Fixed windows are aligned to the wall clock's minutes (lib/limits/fixed-window.ts), so a test
 * that fills a per-minute limit and expects the next request refused fails if a minute ends
 * between the two. Called before such a test's requests: when less than `marginMs` is left of
 * this minute, waits for the next one.
 */
export async function clearOfMinuteEdge(marginMs = 5_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

export function chat(
  key: string | undefined,
  body: unknown = { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  headers: Record<string, string> = {},
): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}
