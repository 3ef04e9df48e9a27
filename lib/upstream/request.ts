/**
 * What Sluice sends upstream for a client's request, shared by the network and the
 * in-process clients. Streams always ask for usage (tokens are reconciled from it);
 * the edge relays to the client only what the client asked for.
 */
import type { Operation } from '../envelope.js';

export const UPSTREAM_PATHS: Readonly<Record<Operation, string>> = {
  'chat.completions': '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function upstreamBody(
  operation: Operation,
  body: Record<string, unknown>,
  stream: boolean,
): Record<string, unknown> {
  // Embeddings have no stream field; the document forbids unknown fields there.
  if (operation === 'embeddings') return body;
  if (!stream) {
    const { stream_options: _dropped, ...rest } = body;
    return { ...rest, stream: false };
  }
  // The responses API reports usage in its final event without being asked.
  if (operation === 'responses') return { ...body, stream: true };
  const asked = isObject(body.stream_options) ? body.stream_options : {};
  return { ...body, stream: true, stream_options: { ...asked, include_usage: true } };
}
