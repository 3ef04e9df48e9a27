import type { Usage } from './openai.js';

/*
 * Response objects of the two generation endpoints. Chat and legacy completions differ
 * only in envelope, so each is a small Format and the generation code is shared.
 */

export type FinishReason = 'stop' | 'length';

export interface Format {
  /** The whole answer in one JSON object (stream: false). */
  full(text: string, finish: FinishReason, usage: Usage): object;
  /** Chunks sent before the first token (chat announces the role). */
  opening(): object[];
  token(text: string): object;
  closing(finish: FinishReason): object;
  usage(usage: Usage): object;
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
  const head = { id: e.id, object: 'chat.completion.chunk', created: e.created, model: e.model, system_fingerprint: e.fingerprint };
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
        { index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: finish },
      ],
      usage,
    }),
    opening: () => [chunk({ role: 'assistant', content: '' }, null)],
    token: (text) => chunk({ content: text }, null),
    closing: (finish) => chunk({}, finish),
    usage: (usage) => ({ ...head, choices: [], usage }),
  };
}

export function completionFormat(e: Envelope): Format {
  const head = { id: e.id, object: 'text_completion', created: e.created, model: e.model, system_fingerprint: e.fingerprint };
  const chunk = (text: string, finish: FinishReason | null) => ({
    ...head,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finish }],
    ...(e.includeUsage ? { usage: null } : {}),
  });
  return {
    full: (text, finish, usage) => ({ ...head, choices: [{ index: 0, text, logprobs: null, finish_reason: finish }], usage }),
    opening: () => [],
    token: (text) => chunk(text, null),
    closing: (finish) => chunk('', finish),
    usage: (usage) => ({ ...head, choices: [], usage }),
  };
}
