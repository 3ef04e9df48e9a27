import type { Tokens } from './flow/service-time.js';

/**
 * The tokens an answer says it used, prompt and output apart: chat and completions name them
 * prompt_tokens and completion_tokens, the Responses API input_tokens and output_tokens (its
 * stream events on their `response`); embeddings have a prompt only. Given only a total, it
 * is all output, the slower kind.
 */
export function tokensUsed(json: unknown): Tokens | undefined {
  type Usage = { usage?: Record<string, unknown> };
  const j = json as (Usage & { response?: Usage }) | undefined;
  const usage = j?.usage ?? j?.response?.usage;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const count = (name: string) => {
    const v = Object.hasOwn(usage, name) ? usage[name] : undefined;
    return typeof v === 'number' && v >= 0 ? v : undefined;
  };
  const total = count('total_tokens');
  const prompt = count('prompt_tokens') ?? count('input_tokens');
  const output = count('completion_tokens') ?? count('output_tokens');
  if (prompt !== undefined) return { prompt, output: output ?? Math.max(0, (total ?? prompt) - prompt) };
  if (total !== undefined) return { prompt: 0, output: total };
  return undefined;
}
