/**
 * The baselines' limiter: an operator's pause, and the same fixed windows Sluice's
 * admission checks (requests and tokens per minute, per account x model, tenant x model and tenant, booked
 * bursts included, a degrade tier's account windows at its hard cap), answered the
 * conventional way: 429 with Retry-After above any of them, nothing queued, nothing
 * slowed. Tokens are charged at the estimate the edge makes and never reconciled
 * (the simulated GPU generates exactly max_tokens, so the estimate is what is used).
 */
import { windowLimits } from '../../lib/admission/admit.js';
import { charge, checkWindows, type WindowCounter } from '../../lib/limits/fixed-window.js';
import type { Policy } from '../../lib/policy/schema.js';
import { estimateTokens } from '../../functions/edge/estimate.js';

export type LimiterDecision =
  { readonly ok: true } | { readonly ok: false; readonly reason: string; readonly retryAfterSec: number };

export interface HardLimiter {
  check(account: string, model: string, body: Record<string, unknown>, now: number): LimiterDecision;
}

export function createHardLimiter(policy: Policy): HardLimiter {
  const counters = new Map<string, WindowCounter>();
  return {
    check(id, model, body, now) {
      if (!Object.hasOwn(policy.accounts, id)) return { ok: false, reason: 'limit:unknown-account', retryAfterSec: 60 };
      const account = { id, account: policy.accounts[id]! };
      // An operator's pause stops both systems alike.
      const tenant = account.account.tenant;
      const paused = Object.hasOwn(policy.tenants, tenant) && policy.tenants[tenant]!.paused;
      if (paused) return { ok: false, reason: 'limit:tenant-paused', retryAfterSec: 60 };
      if (account.account.paused) return { ok: false, reason: 'limit:account-paused', retryAfterSec: 60 };
      const defaultMaxTokens = Object.hasOwn(policy.models, model) ? policy.models[model]!.defaultMaxTokens : 256;
      const tokenEstimate = estimateTokens('chat.completions', body, defaultMaxTokens);
      const specs = windowLimits(policy, { account, model, tokenEstimate, now });
      const decision = checkWindows(
        specs,
        specs.map((s) => counters.get(s.key)),
        now,
      );
      if (!decision.allowed) {
        const denied = specs[decision.firstDenied]!;
        return {
          ok: false,
          reason: `limit:${denied.scope}:${denied.unit}`,
          retryAfterSec: Math.max(1, Math.ceil(decision.retryAfterMs / 1000)),
        };
      }
      specs.forEach((s, i) => counters.set(s.key, charge(decision.checks[i]!, s.cost)));
      return { ok: true };
    },
  };
}
