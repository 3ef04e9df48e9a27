import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { ApiError } from '../errors.js';

/** 415 unless the body says it is JSON. */
export const requireJson = createMiddleware(async (c, next) => {
  const type = c.req.header('content-type') ?? '';
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type)) {
    throw new ApiError(415, `Content-Type must be application/json, got "${type || 'nothing'}".`, 'invalid_request_error', 'unsupported_media_type');
  }
  await next();
});

/** 413 past the limit, counted on the stream so a lying Content-Length does not help. */
export const limitBody = (maxBytes: number) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, `Request body is larger than ${maxBytes} bytes.`, 'invalid_request_error', 'request_too_large');
    },
  });
