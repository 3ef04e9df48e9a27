import type { Usage } from './openai.js';

/*
 * Response objects of the generation endpoints. Chat, legacy completions and the
 * responses API differ only in envelope, so each is a small Format and the generation
 * code is shared.
 */

export type FinishReason = 'stop' | 'length';

export interface Format {
  /** The whole answer in one JSON object (stream: false). */
  full(text: string, finish: FinishReason, usage: Usage): object;
  /** Chunks sent before the first token (chat announces the role). */
  opening(): object[];
  token(text: string): object;
  /** Chunks after the last token; the responses API reports usage in them. */
  closing(finish: FinishReason, usage: Usage): object[];
  /** The extra chunk `stream_options.include_usage` asks for. */
  usage(usage: Usage): object;
  /** Whether the stream ends with `data: [DONE]` (the responses API's does not). */
  readonly done: boolean;
}

export interface Envelope {
  id: string;
  created: number;
  model: string;
  fingerprint: string;
  /** With include_usage, OpenAI marks every chunk but the last with `usage: null`. */
  includeUsage: boolean;
}

export function chatFormat(e: Envelope): Format {
  const head = {
    id: e.id,
    object: 'chat.completion.chunk',
    created: e.created,
    model: e.model,
    system_fingerprint: e.fingerprint,
  };
  const chunk = (delta: object, finish: FinishReason | null) => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(e.includeUsage ? { usage: null } : {}),
  });
  return {
    full: (text, finish, usage) => ({
      id: e.id,
      object: 'chat.completion',
      created: e.created,
      model: e.model,
      system_fingerprint: e.fingerprint,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
          logprobs: null,
          finish_reason: finish,
        },
      ],
      usage,
    }),
    opening: () => [chunk({ role: 'assistant', content: '' }, null)],
    token: (text) => chunk({ content: text }, null),
    closing: (finish) => [chunk({}, finish)],
    usage: (usage) => ({ ...head, choices: [], usage }),
    done: true,
  };
}

export function completionFormat(e: Envelope): Format {
  const head = {
    id: e.id,
    object: 'text_completion',
    created: e.created,
    model: e.model,
    system_fingerprint: e.fingerprint,
  };
  const chunk = (text: string, finish: FinishReason | null) => ({
    ...head,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
    ...(e.includeUsage ? { usage: null } : {}),
  });
  return {
    full: (text, finish, usage) => ({
      ...head,
      choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
      usage,
    }),
    opening: () => [],
    token: (text) => chunk(text, null),
    closing: (finish) => [chunk('', finish)],
    usage: (usage) => ({ ...head, choices: [], usage }),
    done: true,
  };
}

export interface ResponsesRequest {
  instructions: string | null;
  maxOutputTokens: number | null;
}

/**
 * The responses API: one `response` object, or as a stream the events OpenAI sends for
 * a plain text answer (created, in_progress, output item and content part opened, text
 * deltas, then each closed, then completed with usage).
 */
export function responsesFormat(e: Envelope, request: ResponsesRequest): Format {
  const itemId = `msg_${e.id}`;
  let sequence = 0;
  let streamed = '';
  const part = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });
  const item = (text: string, status: 'in_progress' | 'completed' | 'incomplete') => ({
    id: itemId,
    type: 'message',
    role: 'assistant',
    status,
    content: status === 'in_progress' ? [] : [part(text)],
  });
  const response = (status: 'in_progress' | 'completed' | 'incomplete', output: object[], extra: object = {}) => ({
    id: e.id,
    object: 'response',
    created_at: e.created,
    status,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions,
    max_output_tokens: request.maxOutputTokens,
    model: e.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    temperature: 1,
    top_p: 1,
    tool_choice: 'auto',
    tools: [],
    metadata: {},
    ...extra,
  });
  const finished = (text: string, finish: FinishReason, usage: Usage) => {
    const status = finish === 'length' ? 'incomplete' : 'completed';
    return response(status, [item(text, status)], {
      usage: {
        input_tokens: usage.prompt_tokens,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: usage.completion_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.total_tokens,
      },
    });
  };
  const event = (type: string, body: object) => ({ type, sequence_number: sequence++, ...body });
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  return {
    full: finished,
    opening: () => [
      event('response.created', { response: response('in_progress', []) }),
      event('response.in_progress', { response: response('in_progress', []) }),
      event('response.output_item.added', { output_index: 0, item: item('', 'in_progress') }),
      event('response.content_part.added', { ...at, part: part('') }),
    ],
    token: (text) => {
      streamed += text;
      return event('response.output_text.delta', { ...at, delta: text, logprobs: [] });
    },
    closing: (finish, usage) => {
      const done = finished(streamed, finish, usage);
      return [
        event('response.output_text.done', { ...at, text: streamed, logprobs: [] }),
        event('response.content_part.done', { ...at, part: part(streamed) }),
        event('response.output_item.done', { output_index: 0, item: item(streamed, done.status) }),
        event(finish === 'length' ? 'response.incomplete' : 'response.completed', { response: done }),
      ];
    },
    usage: (usage) => ({ usage }),
    done: false,
  };
}
