/**
 * How deep a parsed JSON value nests, measured without recursion: a client body
 * nested many thousand levels deep must be refused before anything recursive (zod,
 * JSON.stringify, the envelope encoder) walks it and overflows the stack.
 */

export interface DepthExceeded {
  /** Where the limit was passed, as a dotted path (`messages.0.content.0...`), cut short when long. */
  readonly path: string;
}

const SHOWN_SEGMENTS = 8;

/** The first place `value` nests deeper than `maxDepth` containers, or undefined when it does not. */
export function findTooDeep(value: unknown, maxDepth: number): DepthExceeded | undefined {
  const stack: Array<{ value: unknown; depth: number; path: readonly string[] }> = [{ value, depth: 0, path: [] }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return { path: shown(item.path) };
    // Only the first segments are kept: the path is for the error message, not for a lookup.
    const child = (key: string) => (item.path.length < SHOWN_SEGMENTS ? [...item.path, key] : item.path);
    if (Array.isArray(item.value)) {
      item.value.forEach((v, i) => stack.push({ value: v, depth, path: child(String(i)) }));
    } else {
      for (const [k, v] of Object.entries(item.value)) stack.push({ value: v, depth, path: child(k) });
    }
  }
  return undefined;
}

function shown(path: readonly string[]): string {
  return path.length < SHOWN_SEGMENTS ? path.join('.') : `${path.join('.')}...`;
}

/** Thrown by encoders handed a value deeper than they accept, instead of a stack overflow. */
export class TooDeepError extends Error {
  constructor(
    readonly maxDepth: number,
    readonly path: string,
  ) {
    super(`value nests deeper than ${maxDepth} levels at '${path || '(root)'}'`);
    this.name = 'TooDeepError';
  }
}
