/**
 * Request bodies as the OpenAI OpenAPI document defines them (the pinned copy in
 * test/fixtures/openai-openapi/ is the reference; test/contract/ checks these schemas
 * against it). A value the document forbids is a 400 naming the field, before anything
 * is charged; `null` is accepted wherever the document marks a field nullable. Fields
 * Sluice does not read pass through to the upstream untouched.
 */
import { z } from 'zod';
import type { Operation } from '../../lib/envelope.js';

const nullable = <T extends z.ZodType>(schema: T) => schema.nullish();
const int = z.int();
const range = (min: number, max: number) => z.number().min(min).max(max);

/** Token ids: the document allows them wherever a prompt or an embedding input is text. */
const tokenIds = z.array(int).min(1);

const stop = nullable(z.union([z.string(), z.array(z.string()).min(1).max(4)]));
const sampling = {
  temperature: nullable(range(0, 2)),
  top_p: nullable(range(0, 1)),
  presence_penalty: nullable(range(-2, 2)),
  frequency_penalty: nullable(range(-2, 2)),
  logit_bias: nullable(z.record(z.string(), int)),
  stop,
  stream: nullable(z.boolean()),
};
const streamOptions = nullable(
  z.looseObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }),
);

const contentPart = z.looseObject({ type: z.string().min(1) });
const content = z.union([z.string(), z.array(contentPart).min(1)]);
const message = <R extends string>(roles: readonly [R, ...R[]], shape: z.ZodRawShape) =>
  z.looseObject({ role: z.enum(roles), ...shape });
const chatMessage = z.discriminatedUnion('role', [
  message(['developer', 'system', 'user'], { content }),
  message(['assistant'], { content: nullable(content) }),
  message(['tool'], { content, tool_call_id: z.string() }),
  message(['function'], { content: z.string().nullable(), name: z.string() }),
]);

const chat = z.looseObject({
  model: z.string().min(1),
  messages: z.array(chatMessage).min(1),
  ...sampling,
  // The document sets no lower bound here; the API itself refuses less than 1.
  max_tokens: nullable(int.min(1)),
  max_completion_tokens: nullable(int.min(1)),
  n: nullable(int.min(1).max(128)),
  logprobs: nullable(z.boolean()),
  top_logprobs: nullable(int.min(0).max(20)),
  stream_options: streamOptions,
});

const completions = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds).min(1)]).nullable(),
  ...sampling,
  max_tokens: nullable(int.min(0)),
  n: nullable(int.min(1).max(128)),
  best_of: nullable(int.min(0).max(20)),
  logprobs: nullable(int.min(0).max(5)),
  echo: nullable(z.boolean()),
  suffix: nullable(z.string()),
  stream_options: streamOptions,
});

const embeddings = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1).max(2048),
    tokenIds.max(2048),
    z.array(tokenIds).min(1).max(2048),
  ]),
  encoding_format: z.enum(['float', 'base64']).optional(),
  dimensions: int.min(1).optional(),
  user: z.string().optional(),
});

const responses = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.looseObject({}))]).optional(),
  instructions: nullable(z.string()),
  temperature: sampling.temperature,
  top_p: sampling.top_p,
  top_logprobs: nullable(int.min(0).max(20)),
  max_output_tokens: nullable(int.min(16)),
  stream: sampling.stream,
  stream_options: nullable(z.looseObject({ include_obfuscation: z.boolean().optional() })),
  // Sluice's own async mode (Prefer: respond-async) is the queued path; OpenAI-side
  // background responses would need GET /v1/responses/{id}, which Sluice does not serve.
  background: nullable(z.literal(false, { error: 'background responses are not served; use Prefer: respond-async' })),
});

export type RequestBody = Record<string, unknown> & { model: string; stream?: boolean | null };

export const bodies: Record<Operation, z.ZodType<RequestBody>> = {
  'chat.completions': chat,
  completions,
  embeddings,
  responses,
};

/** What the document says besides the field shapes: streams only where a route has them, options only with a stream. */
export function crossFieldIssue(
  operation: Operation,
  body: RequestBody,
): { param: string; message: string } | undefined {
  if (operation === 'embeddings' && body.stream != null && body.stream !== false) {
    return { param: 'stream', message: 'embeddings are not streamed' };
  }
  if (body.stream_options != null && body.stream !== true) {
    return { param: 'stream_options', message: "'stream_options' is only allowed when 'stream' is true" };
  }
  return undefined;
}
