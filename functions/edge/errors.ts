import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { openAiError } from '../../lib/openai-error.js';

/** Thrown anywhere in the edge; answered as OpenAI-style error JSON with its status. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }

  body() {
    return openAiError(this.message, this.type, this.code, this.param);
  }
}

export function errorResponse(c: Context, error: ApiError): Response {
  for (const [k, v] of Object.entries(error.headers)) c.header(k, v);
  return c.json(openAiError(error.message, error.type, error.code, error.param), error.status);
}

export function modelNotFound(model: string): ApiError {
  const message = `The model '${model}' does not exist or you do not have access to it.`;
  return new ApiError(404, message, 'invalid_request_error', 'model_not_found', 'model');
}
