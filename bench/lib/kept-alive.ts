/**
 * A sync answer held past the edge's keepalive commits to 200 and carries what would have
 * been an error status as an OpenAI error object in the body (functions/edge/routes/inference.ts).
 * A client reading it gets no completion, so the lab counts it as the failure it carries,
 * with the status the dispatcher gave that failure (lib/dispatch/dispatcher.ts).
 */
export interface KeptAliveFailure {
  readonly status: number;
  readonly reason: string;
}

export function keptAliveFailure(error: { readonly code?: string | null; readonly type?: string }): KeptAliveFailure {
  const code = error.code ?? '';
  if (code === 'queue_wait_exceeded' || error.type === 'timeout') return { status: 504, reason: 'expired' };
  if (code === 'capacity_deadline' || error.type === 'rate_limit_exceeded')
    return { status: 429, reason: `limit:${code || 'unknown'}` };
  if (code === 'upstream_failed' || error.type === 'upstream_error') return { status: 502, reason: 'upstream-failed' };
  if (code === 'queue_unavailable') return { status: 503, reason: 'queue-unavailable' };
  return { status: 500, reason: `kept-alive-error:${code || error.type || 'unknown'}` };
}
