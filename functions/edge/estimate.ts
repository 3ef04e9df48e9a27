/**
 * Tokens charged at admission: the prompt (text at four characters a token, token ids
 * one each) plus the most the request may generate, counting every choice it asks for.
 * Reconciled against the upstream's usage once the request is done.
 */
import type { Operation } from '../../lib/envelope.js';

const textTokens = (value: unknown) => Math.ceil(JSON.stringify(value ?? '').length / 4);
const optionalText = (value: unknown) => (value == null ? 0 : textTokens(value));

function promptTokens(value: unknown): number {
  if (Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === 'number')) return value.length;
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((x) => Array.isArray(x) && x.every((y) => typeof y === 'number'))
  ) {
    return value.reduce((n: number, ids: unknown[]) => n + ids.length, 0);
  }
  if (Array.isArray(value) && value.every((x) => typeof x === 'string')) {
    return value.reduce((n: number, s: string) => n + textTokens(s), 0);
  }
  return textTokens(value);
}

/** How many separate prompts a completions body holds: each one gets its own choices. */
function promptCount(prompt: unknown): number {
  if (!Array.isArray(prompt) || prompt.length === 0) return 1;
  return prompt.every((x) => typeof x === 'number') ? 1 : prompt.length;
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && v >= 0 ? v : undefined);

/** Tokens charged at admission, split: the prompt's, and the most the request may generate. */
export function estimateTokenParts(
  operation: Operation,
  body: Record<string, unknown>,
  defaultMaxTokens: number,
): { prompt: number; output: number } {
  switch (operation) {
    case 'embeddings':
      return { prompt: promptTokens(body.input), output: 0 };
    case 'chat.completions': {
      const messages = body.messages as { content?: unknown; tool_calls?: unknown }[];
      const prompt = textTokens(messages.map((m) => [m.content ?? '', m.tool_calls ?? ''])) + optionalText(body.tools);
      const budget = positive(body.max_completion_tokens) ?? positive(body.max_tokens) ?? defaultMaxTokens;
      return { prompt, output: budget * (positive(body.n) ?? 1) };
    }
    case 'completions': {
      // max_completion_tokens is not a completions field: it passes through but budgets nothing.
      const budget = positive(body.max_tokens) ?? defaultMaxTokens;
      const choices = Math.max(positive(body.n) ?? 1, positive(body.best_of) ?? 1);
      return { prompt: promptTokens(body.prompt), output: budget * choices * promptCount(body.prompt) };
    }
    case 'responses': {
      const prompt = textTokens(body.input) + optionalText(body.instructions) + optionalText(body.tools);
      return { prompt, output: positive(body.max_output_tokens) ?? defaultMaxTokens };
    }
  }
}

export function estimateTokens(operation: Operation, body: Record<string, unknown>, defaultMaxTokens: number): number {
  const { prompt, output } = estimateTokenParts(operation, body, defaultMaxTokens);
  return prompt + output;
}
