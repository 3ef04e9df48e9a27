import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { findTooDeep } from '../../../lib/json-depth.js';
import { ApiError } from '../errors.js';

/** Nesting accepted in a request body unless the edge is told otherwise. */
export const DEFAULT_MAX_BODY_DEPTH = 64;

/** 415 unless the body says it is JSON. */
export const requireJson = createMiddleware(async (c, next) => {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new ApiError(
      415,
      `Content-Type must be application/json, got "${type || 'nothing'}".`,
      'invalid_request_error',
      'unsupported_media_type',
    );
  }
  await next();
});

/** 413 past the limit, counted on the stream so a lying Content-Length does not help. */
export const limitBody = (maxBytes: number) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(
        413,
        `Request body is larger than ${maxBytes} bytes.`,
        'invalid_request_error',
        'request_too_large',
      );
    },
  });

/**
 * The parsed body, or a 400: malformed JSON, or nested deeper than `maxDepth`.
 * Runs before anything is validated recursively, admitted or charged.
 */
export async function readJsonBody(c: Context, maxDepth: number): Promise<unknown> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(
      400,
      'We could not parse the JSON body of your request.',
      'invalid_request_error',
      'invalid_json',
    );
  }
  const tooDeep = findTooDeep(raw, maxDepth);
  if (tooDeep) {
    throw new ApiError(
      400,
      `The request body nests deeper than the limit of ${maxDepth} levels (at '${tooDeep.path}').`,
      'invalid_request_error',
      'body_too_deep',
      tooDeep.path || null,
    );
  }
  return raw;
}
