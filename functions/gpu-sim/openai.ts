import { z } from 'zod';

/*
 * Request shapes of the OpenAI API, only as strict as the simulator needs: unknown
 * fields pass through (real clients send temperature, tools, user...), the fields that
 * change behaviour are checked so a malformed request gets a 400 like it would upstream.
 */

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

const chatMessage = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
});

const streamOptions = z.looseObject({ include_usage: z.boolean().nullish() }).nullish();

/** vLLM's extra field: the request's place under `--scheduling-policy priority` (lower first). */
const priority = z.int().nullish();

export const chatBodySchema = z.looseObject({
  model: z.string(),
  messages: z.array(chatMessage).min(1),
  max_tokens: z.int().min(1).nullish(),
  max_completion_tokens: z.int().min(1).nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  priority,
});

const tokenIds = z.array(z.int()).min(1);

export const completionBodySchema = z.looseObject({
  model: z.string(),
  prompt: z.union([z.string(), z.array(z.string()), tokenIds, z.array(tokenIds).min(1)]).nullable(),
  max_tokens: z.int().min(0).nullish(),
  stream: z.boolean().nullish(),
  stream_options: streamOptions,
  priority,
});

export const embeddingBodySchema = z.looseObject({
  model: z.string(),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1),
    z.array(z.int()).min(1),
    z.array(z.array(z.int()).min(1)).min(1),
  ]),
  dimensions: z.int().min(1).max(4096).nullish(),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  priority,
});

export type ChatBody = z.infer<typeof chatBodySchema>;
export type CompletionBody = z.infer<typeof completionBodySchema>;
export type EmbeddingBody = z.infer<typeof embeddingBodySchema>;

/** The text the "model" reads; roles are part of it so a system prompt changes the answer. */
export function chatPrompt(body: ChatBody): { key: string; chars: number } {
  let key = '';
  let chars = 0;
  for (const m of body.messages) {
    const text = messageText(m.content);
    chars += text.length;
    key += `${m.role}\u0000${text}\u0001`;
  }
  return { key, chars };
}

function messageText(content: ChatBody['messages'][number]['content']): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((p) => p.text ?? '').join('');
}

/** Legacy completions accept a batch of prompts, as text or token ids; the simulator answers them as one. */
export function completionPrompt(body: CompletionBody): string {
  const prompt = body.prompt ?? '<|endoftext|>';
  if (typeof prompt === 'string') return prompt;
  return prompt.map((p) => (typeof p === 'string' ? p : JSON.stringify(p))).join('\n');
}

const inputItem = z.looseObject({
  role: z.string().optional(),
  content: z.union([z.string(), z.array(contentPart)]).optional(),
});

export const responsesBodySchema = z.looseObject({
  model: z.string(),
  input: z.union([z.string(), z.array(inputItem)]).optional(),
  instructions: z.string().nullish(),
  max_output_tokens: z.int().min(16).nullish(),
  stream: z.boolean().nullish(),
  priority,
});

export type ResponsesBody = z.infer<typeof responsesBodySchema>;

/** The text the "model" reads from a responses request: its instructions and every input message. */
export function responsesPrompt(body: ResponsesBody): { key: string; chars: number } {
  let key = body.instructions ? `instructions\u0000${body.instructions}\u0001` : '';
  let chars = body.instructions?.length ?? 0;
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
  for (const item of items) {
    const text =
      typeof item.content === 'string' ? item.content : (item.content ?? []).map((p) => p.text ?? '').join('');
    chars += text.length;
    key += `${item.role ?? 'user'}\u0000${text}\u0001`;
  }
  return { key, chars };
}

/** Embedding inputs as strings; token-id arrays count one token per id. */
export function embeddingInputs(body: EmbeddingBody): { key: string; tokens: number | null }[] {
  const input = body.input;
  if (typeof input === 'string') return [{ key: input, tokens: null }];
  if (input.every((x) => typeof x === 'string')) {
    return (input as string[]).map((s) => ({ key: s, tokens: null }));
  }
  if (input.every((x) => typeof x === 'number')) {
    return [{ key: JSON.stringify(input), tokens: input.length }];
  }
  return (input as number[][]).map((ids) => ({ key: JSON.stringify(ids), tokens: ids.length }));
}

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export function errorBody(
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): OpenAiErrorBody {
  return { error: { message, type, param, code } };
}

/** A zod failure phrased the way OpenAI phrases its 400s: one message, the offending field. */
export function validationError(error: z.ZodError): OpenAiErrorBody {
  const issue = error.issues[0];
  const param = issue && issue.path.length > 0 ? issue.path.join('.') : null;
  const message = issue ? `${param ?? 'body'}: ${issue.message}` : 'Invalid request body';
  return errorBody(message, 'invalid_request_error', 'invalid_value', param);
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export function usage(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** Base64 of little-endian float32s, as OpenAI returns for encoding_format=base64. */
export function base64Floats(values: number[]): string {
  const buf = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}
