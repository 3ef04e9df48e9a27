/**
 * Deterministic stand-ins for what a model computes: token counts, output length,
 * output words and embedding vectors all derive from a hash of the input, so the
 * same prompt always yields the same answer and benchmarks are repeatable.
 */

/** FNV-1a over UTF-16 code units with a murmur3 finalizer (FNV alone clusters on short inputs). */
export function hash32(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: small, fast, and good enough to pick words. Returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The common rule of thumb for English text: about four characters per token. */
export function countTokens(text: string): number {
  return tokensForChars(text.length);
}

export function tokensForChars(chars: number): number {
  return Math.ceil(chars / 4);
}

/** How many tokens the "model" wants to say about this prompt, before max_tokens applies. */
export function naturalLength(prompt: string, min: number, max: number): number {
  const span = Math.max(0, max - min) + 1;
  return min + (hash32(prompt, 0x5eed) % span);
}

const VOCABULARY = [
  'the',
  'flow',
  'of',
  'tokens',
  'through',
  'a',
  'narrow',
  'gate',
  'is',
  'steady',
  'when',
  'each',
  'request',
  'waits',
  'its',
  'turn',
  'and',
  'queue',
  'holds',
  'burst',
  'model',
  'answers',
  'with',
  'care',
  'latency',
  'grows',
  'under',
  'load',
  'so',
  'pace',
  'matters',
  'more',
  'than',
  'speed',
  'river',
  'sluice',
  'opens',
  'slowly',
  'water',
  'rises',
  'tenant',
  'fair',
  'share',
  'slot',
  'free',
  'busy',
  'prompt',
  'context',
  'window',
  'reply',
];

/**
 * The i-th token of the answer to `prompt`, one word per token. Every token after the
 * first carries its leading space so that concatenated stream deltas equal the full text.
 */
export function outputTokens(prompt: string, count: number): string[] {
  const next = prng(hash32(prompt, 0x7e47));
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    let word = VOCABULARY[Math.floor(next() * VOCABULARY.length)]!;
    if (i === 0) word = word[0]!.toUpperCase() + word.slice(1);
    const end = i === count - 1 ? '.' : next() < 0.08 ? ',' : '';
    out.push((i === 0 ? '' : ' ') + word + end);
  }
  return out;
}

/** A unit-length vector so cosine similarity behaves like a real embedding's. */
export function embeddingVector(input: string, dims: number): number[] {
  const next = prng(hash32(input, 0xe111));
  const raw = Array.from({ length: dims }, () => next() * 2 - 1);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((x) => Number((x / norm).toFixed(6)));
}
