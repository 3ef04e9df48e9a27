/**
 * @upstash/ratelimit ≥ 2.1 starts its Lua with `#!lua flags=allow-key-locking`,
 * a flag only Upstash knows; stock Redis refuses the script. The proxy strips
 * the flag and remembers sha1(original) → sha1(stripped), because clients hash
 * the text they hold and call EVALSHA with that hash.
 */
import { createHash } from 'node:crypto';

const UPSTASH_ONLY_FLAGS = new Set(['allow-key-locking']);

export function sha1(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}

export function stripUpstashShebang(script: string): string {
  const m = /^#!lua([^\n]*)/.exec(script);
  if (!m) return script;
  const options = (m[1] ?? '').trim().split(/\s+/).filter(Boolean);
  let changed = false;
  const kept = options
    .map((opt) => {
      if (!opt.startsWith('flags=')) return opt;
      const flags = opt.slice('flags='.length).split(',').filter(Boolean);
      const stock = flags.filter((f) => !UPSTASH_ONLY_FLAGS.has(f));
      if (stock.length === flags.length) return opt;
      changed = true;
      return stock.length ? `flags=${stock.join(',')}` : '';
    })
    .filter(Boolean);
  if (!changed) return script;
  // The line goes but its newline stays, so Lua error line numbers still match
  // the text the caller wrote.
  const shebang = kept.length ? `#!lua ${kept.join(' ')}` : '';
  return shebang + script.slice(m[0].length);
}

export class ScriptRegistry {
  private readonly toStripped = new Map<string, string>();

  /** Returns the text Redis will accept, recording the hash mapping if it differs. */
  register(script: string): { text: string; originalSha: string } {
    const text = stripUpstashShebang(script);
    const originalSha = sha1(script);
    if (text !== script) this.toStripped.set(originalSha, sha1(text));
    return { text, originalSha };
  }

  /** The hash Redis knows the script by. Unknown hashes pass through unchanged. */
  resolve(sha: string): string {
    return this.toStripped.get(sha.toLowerCase()) ?? sha;
  }
}
