/**
 * How deep a parsed JSON value nests, counted without recursion and stopping at
 * `limit`: JSON.parse takes any depth, but JSON.stringify (estimates, the envelope)
 * overflows the stack on deep enough input, so depth is bounded before any work.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
