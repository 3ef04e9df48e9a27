/**
 * Turns the upstream's stream events into what the client asked for. Sluice always
 * asks the upstream for usage (it reconciles tokens with it); a client that did not
 * set `stream_options.include_usage` gets neither the closing usage chunk nor a
 * `usage` field on the others. Responses-API events keep their SSE event name.
 */
import type { Operation } from '../../lib/envelope.js';

export interface ClientEvent {
  readonly event?: string;
  readonly data: string;
}

export type StreamRelay = (data: string) => ClientEvent | undefined;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parse(data: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(data);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

export function streamRelay(operation: Operation, body: Record<string, unknown>): StreamRelay {
  if (operation === 'responses') {
    return (data) => {
      const type = parse(data)?.type;
      return typeof type === 'string' ? { event: type, data } : { data };
    };
  }
  const wantsUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
  if (wantsUsage) return (data) => ({ data });
  return (data) => {
    if (!data.includes('"usage"')) return { data };
    const chunk = parse(data);
    if (!chunk || !('usage' in chunk)) return { data };
    // The closing usage chunk exists only because Sluice asked for it.
    if (Array.isArray(chunk.choices) && chunk.choices.length === 0) return undefined;
    const { usage: _asked, ...rest } = chunk;
    return { data: JSON.stringify(rest) };
  };
}

/** Chat and completions streams end with `[DONE]`; the responses API ends with its last event. */
export function endsWithDone(operation: Operation): boolean {
  return operation !== 'responses';
}
