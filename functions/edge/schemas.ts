import { z } from 'zod';
import type { Operation } from '../../lib/envelope.js';

const content = z.union([z.string(), z.array(z.record(z.string(), z.unknown())), z.null()]);

const common = {
  model: z.string().min(1),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  stream: z.boolean().optional(),
};

/** Only what Sluice reads is checked; every other field passes through to the model. */
export const bodies: Record<Operation, z.ZodType<Record<string, unknown> & { model: string; stream?: boolean }>> = {
  'chat.completions': z.looseObject({
    ...common,
    messages: z.array(z.looseObject({ role: z.string().min(1), content: content.optional() })).min(1),
  }),
  completions: z.looseObject({ ...common, prompt: z.union([z.string(), z.array(z.string()).min(1)]) }),
  embeddings: z.looseObject({ model: z.string().min(1), input: z.union([z.string(), z.array(z.string()).min(1)]) }),
};

/** Tokens charged at admission: prompt length / 4 plus the completion budget; reconciled later. */
export function estimateTokens(operation: Operation, body: Record<string, unknown>, defaultMaxTokens: number): number {
  const text =
    operation === 'chat.completions'
      ? JSON.stringify((body.messages as unknown[]).map((m) => (m as { content?: unknown }).content ?? ''))
      : JSON.stringify(operation === 'completions' ? body.prompt : body.input);
  const prompt = Math.ceil(text.length / 4);
  if (operation === 'embeddings') return prompt;
  const completion = (body.max_completion_tokens ?? body.max_tokens ?? defaultMaxTokens) as number;
  return prompt + completion;
}
