import { describe, expect, it } from 'vitest';
import { estimateTokenParts, estimateTokens } from '../../../functions/edge/estimate.js';

const msgs = [{ role: 'user', content: 'x'.repeat(40) }];

describe('estimateTokens', () => {
  it('chat: prompt plus the completion budget for every choice', () => {
    const one = estimateTokens('chat.completions', { model: 'm', messages: msgs, max_tokens: 100 }, 16);
    expect(estimateTokens('chat.completions', { model: 'm', messages: msgs, max_tokens: 100, n: 3 }, 16)).toBe(
      one + 200,
    );
    expect(
      estimateTokens(
        'chat.completions',
        { model: 'm', messages: msgs, max_completion_tokens: 10, max_tokens: 100 },
        16,
      ),
    ).toBe(one - 90);
  });

  it('nulls fall back to the model default', () => {
    const fallback = estimateTokens('chat.completions', { model: 'm', messages: msgs }, 16);
    expect(
      estimateTokens(
        'chat.completions',
        { model: 'm', messages: msgs, max_tokens: null, max_completion_tokens: null, n: null },
        16,
      ),
    ).toBe(fallback);
  });

  it('completions: token ids count one each; every prompt of a batch gets its own choices', () => {
    expect(estimateTokens('completions', { model: 'm', prompt: [1, 2, 3], max_tokens: 10 }, 16)).toBe(3 + 10);
    expect(estimateTokens('completions', { model: 'm', prompt: [[1, 2], [3]], max_tokens: 10 }, 16)).toBe(3 + 2 * 10);
    expect(
      estimateTokens('completions', { model: 'm', prompt: [[1, 2], [3]], max_tokens: 10, n: 2, best_of: 3 }, 16),
    ).toBe(3 + 2 * 3 * 10);
    expect(estimateTokens('completions', { model: 'm', prompt: [1], max_tokens: 0 }, 16)).toBe(1);
  });

  it('completions: max_completion_tokens is not a completions field and budgets nothing', () => {
    expect(estimateTokens('completions', { model: 'm', prompt: [1], max_completion_tokens: 3 }, 80)).toBe(1 + 80);
  });

  it('embeddings: the input only, token ids one each', () => {
    expect(
      estimateTokens(
        'embeddings',
        {
          model: 'm',
          input: [
            [1, 2],
            [3, 4, 5],
          ],
        },
        16,
      ),
    ).toBe(5);
    expect(estimateTokens('embeddings', { model: 'm', input: 'x'.repeat(38) }, 16)).toBe(10);
  });

  it('responses: input and instructions, plus max_output_tokens', () => {
    const base = estimateTokens('responses', { model: 'm', input: 'x'.repeat(38) }, 16);
    expect(base).toBe(10 + 16);
    expect(estimateTokens('responses', { model: 'm', input: 'x'.repeat(38), max_output_tokens: 100 }, 16)).toBe(110);
    expect(estimateTokens('responses', { model: 'm', input: 'x'.repeat(38), instructions: 'y'.repeat(38) }, 16)).toBe(
      base + 10,
    );
  });

  it('splits the prompt from the output budget, which the dispatcher times apart', () => {
    const long = [{ role: 'user', content: 'x'.repeat(24_000) }];
    const chat = estimateTokenParts('chat.completions', { model: 'm', messages: long, max_tokens: 150 }, 16);
    expect(chat.output).toBe(150);
    expect(chat.prompt).toBeGreaterThanOrEqual(6_000);
    expect(chat.prompt + chat.output).toBe(
      estimateTokens('chat.completions', { model: 'm', messages: long, max_tokens: 150 }, 16),
    );
    expect(estimateTokenParts('embeddings', { model: 'm', input: [1, 2, 3] }, 16)).toEqual({ prompt: 3, output: 0 });
    expect(estimateTokenParts('responses', { model: 'm', input: 'hi' }, 16).output).toBe(16);
  });
});
