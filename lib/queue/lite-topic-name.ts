/**
 * LiteTopic names follow `{tier}.{tenant}.{model}`, encoded into the broker's topic
 * charset (letters, digits, `-`, `_`, `%`, `|`) and length. Letters and digits
 * pass through; any other byte becomes `_HH`; parts are joined with `-` (never
 * produced inside a part), so the encoding is injective. Names too long are cut
 * and suffixed with a hash of the full name.
 */
import { createHash } from 'node:crypto';

export const MAX_LITE_TOPIC_LENGTH = 64;

function encodePart(part: string): string {
  let out = '';
  for (const byte of Buffer.from(part, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9]/.test(c) ? c : `_${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

export function liteTopicName(tier: string, tenant: string, model: string, maxLength = MAX_LITE_TOPIC_LENGTH): string {
  const full = [tier, tenant, model].map(encodePart).join('-');
  if (full.length <= maxLength) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 16);
  return `${full.slice(0, maxLength - hash.length - 1)}|${hash}`;
}
