import { describe, expect, it } from 'vitest';
import { tokensUsed } from '../../../lib/dispatch/usage.js';

describe('tokensUsed', () => {
  it('reads prompt and output apart, in each API’s names', () => {
    expect(tokensUsed({ usage: { prompt_tokens: 6_000, completion_tokens: 150, total_tokens: 6_150 } })).toEqual({
      prompt: 6_000,
      output: 150,
    });
    // The Responses API, and its stream events, which carry it on their `response`.
    expect(tokensUsed({ usage: { input_tokens: 40, output_tokens: 9, total_tokens: 49 } })).toEqual({
      prompt: 40,
      output: 9,
    });
    expect(
      tokensUsed({ type: 'response.completed', response: { usage: { input_tokens: 4, output_tokens: 2 } } }),
    ).toEqual({ prompt: 4, output: 2 });
    // Embeddings: a prompt and a total.
    expect(tokensUsed({ usage: { prompt_tokens: 12, total_tokens: 12 } })).toEqual({ prompt: 12, output: 0 });
  });

  it('takes a bare total as output, and nothing from what is not a count', () => {
    expect(tokensUsed({ usage: { total_tokens: 30 } })).toEqual({ prompt: 0, output: 30 });
    // Chat streams send usage: null on every chunk but the last.
    expect(tokensUsed({ choices: [], usage: null })).toBeUndefined();
    expect(tokensUsed({ usage: { prompt_tokens: '5', total_tokens: -1 } })).toBeUndefined();
    expect(tokensUsed({ usage: JSON.parse('{"__proto__": {"prompt_tokens": 5}}') })).toBeUndefined();
    expect(tokensUsed(undefined)).toBeUndefined();
    expect(tokensUsed('data')).toBeUndefined();
  });
});
