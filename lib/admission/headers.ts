/**
 * Rate-limit headers clients already read: OpenAI's `x-ratelimit-*` names, and the
 * IETF httpapi draft's `RateLimit-Policy` / `RateLimit` fields (Lists of Strings with
 * parameters, draft-ietf-httpapi-ratelimit-headers-11).
 */
import type { Unit, WindowState } from '../store/types.js';
import { limitName } from './names.js';

/** The window closest to refusing, per unit: that is the one a client must respect. */
function binding(windows: readonly WindowState[], unit: Unit): WindowState | undefined {
  let best: WindowState | undefined;
  for (const w of windows) if (w.unit === unit && (!best || w.remaining < best.remaining)) best = w;
  return best;
}

/** `Retry-After` in whole seconds, never 0: a client told 0 retries at once into the same refusal. */
export function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

/**
 * OpenAI's reset format, which is Go's `time.Duration` string: "250ms", "1.5s",
 * "6m0s", "1h0m0s". Millisecond precision: finer parts are rounded away.
 */
export function openAiDuration(ms: number): string {
  const total = Math.max(0, Math.round(ms));
  if (total === 0) return '0s';
  if (total < 1000) return `${total}ms`;
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const rest = total % 60_000;
  const whole = Math.floor(rest / 1000);
  const frac = rest % 1000;
  const s = frac === 0 ? `${whole}` : `${whole}.${String(frac).padStart(3, '0').replace(/0+$/, '')}`;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

/**
 * The draft's registered quota units have nothing for model tokens, so token policies
 * say so in a vendor-prefixed parameter; request policies name their unit outright.
 */
function unitParams(unit: Unit): string {
  return unit === 'requests' ? ';qu="requests"' : ';sluice-qu="tokens"';
}

export function rateLimitHeaders(windows: readonly WindowState[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const unit of ['requests', 'tokens'] as const) {
    const w = binding(windows, unit);
    if (!w) continue;
    headers[`x-ratelimit-limit-${unit}`] = String(w.limit);
    headers[`x-ratelimit-remaining-${unit}`] = String(w.remaining);
    headers[`x-ratelimit-reset-${unit}`] = openAiDuration(w.resetMs);
  }
  if (windows.length > 0) {
    const name = (w: WindowState) => `"${limitName(w.scope, w.unit)}"`;
    const window = (w: WindowState) => Math.max(1, Math.round(w.windowMs / 1000));
    headers['ratelimit-policy'] = windows
      .map((w) => `${name(w)};q=${w.limit}${unitParams(w.unit)};w=${window(w)}`)
      .join(', ');
    const left = (w: WindowState) => `r=${Math.max(0, w.remaining)};t=${Math.ceil(w.resetMs / 1000)}`;
    headers['ratelimit'] = windows.map((w) => `${name(w)};${left(w)}`).join(', ');
  }
  return headers;
}
