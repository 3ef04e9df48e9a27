/**
 * Rate-limit headers clients already read: OpenAI's `x-ratelimit-*` names, and the
 * IETF httpapi draft's `RateLimit-Policy` / `RateLimit` structured fields.
 */
import type { Unit, WindowState } from '../store/types.js';

/** The window closest to refusing, per unit: that is the one a client must respect. */
function binding(windows: readonly WindowState[], unit: Unit): WindowState | undefined {
  let best: WindowState | undefined;
  for (const w of windows) if (w.unit === unit && (!best || w.remaining < best.remaining)) best = w;
  return best;
}

/** OpenAI's duration format: "1m30s", "6s", "250ms". */
export function openAiDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const s = Math.ceil(ms / 1000);
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
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
    const name = (w: WindowState) => `"${w.scope}-${w.unit}"`;
    headers['ratelimit-policy'] = windows.map((w) => `${name(w)};q=${w.limit};w=${Math.round(w.windowMs / 1000)}`).join(', ');
    headers['ratelimit'] = windows.map((w) => `${name(w)};r=${w.remaining};t=${Math.ceil(w.resetMs / 1000)}`).join(', ');
  }
  return headers;
}
