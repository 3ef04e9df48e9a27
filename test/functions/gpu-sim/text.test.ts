import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { embeddingVector, naturalLength, outputTokens, tokensForChars } from '../../../functions/gpu-sim/text.js';

describe('gpu-sim text', () => {
  it('chooses an output length within [min, max] that spreads over the range', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const n = naturalLength(s, 16, 128);
        return Number.isInteger(n) && n >= 16 && n <= 128;
      }),
    );
    const lengths = new Set(Array.from({ length: 500 }, (_, i) => naturalLength(`prompt ${i}`, 16, 128)));
    expect(lengths.size).toBeGreaterThan(80);
  });

  it('emits one word per token whose concatenation reads as one sentence', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 200 }), (s, n) => {
        const tokens = outputTokens(s, n);
        expect(tokens).toHaveLength(n);
        tokens.slice(1).forEach((t) => expect(t.startsWith(' ')).toBe(true));
        expect(tokens.join('').split(' ')).toHaveLength(n);
        expect(tokens.at(-1)!.endsWith('.')).toBe(true);
        // A shorter answer is a prefix of the longer one (same PRNG stream) except the final period.
        expect(outputTokens(s, n + 5).slice(0, n - 1)).toEqual(tokens.slice(0, n - 1));
      }),
    );
  });

  it('rounds token counts up', () => {
    expect([0, 1, 4, 5, 8, 9].map(tokensForChars)).toEqual([0, 1, 1, 2, 2, 3]);
  });

  it('makes unit-length, input-specific embeddings', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 64 }), (s, d) => {
        const v = embeddingVector(s, d);
        expect(v).toHaveLength(d);
        expect(Math.hypot(...v)).toBeCloseTo(1, 4);
        expect(embeddingVector(s, d)).toEqual(v);
      }),
    );
  });
});
