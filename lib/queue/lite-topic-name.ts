/**
 * LiteTopic names follow `{tier}.{tenant}.{account}.{model}`: the first seed's one
 * LiteTopic per user x model, so one account's backlog never queues in front of
 * another account of the same tenant (team-wide caps stay at admission). The tenant
 * is kept for whoever reads the broker's LiteTopic list. Encoded into what the
 * RocketMQ 5.5 proxy accepts for a LiteTopic: `[A-Za-z0-9_-]`, at most 64 bytes
 * (GrpcValidator.validateLiteTopic, ProxyConfig.maxLiteTopicSize).
 *
 * Letters and digits pass through; every other byte of a part becomes `_hh`
 * (lowercase hex); parts are joined with `-`, which never occurs inside an encoded
 * part. Reading left to right, `_` is always followed by two hex digits, so the
 * short form is injective over (tier, tenant, account, model).
 *
 * A name longer than the limit keeps a readable prefix (cut at an escape boundary)
 * and ends in `_x` + 24 hex digits of SHA-256 over the full encoded name. `_x` never
 * appears in a short name, so long and short names cannot meet; two long names meet
 * only on a 96-bit hash collision.
 */
import { createHash } from 'node:crypto';

export const MAX_LITE_TOPIC_LENGTH = 64;
const HASH_HEX = 24;
const LONG_MARKER = '_x';

function encodePart(part: string): string {
  let out = '';
  for (const byte of Buffer.from(part, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9]/.test(c) ? c : `_${byte.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** What names a LiteTopic: the envelope, an admission or a telemetry event carry these fields. */
export interface LiteTopicOf {
  readonly tier: string;
  readonly tenant: string;
  readonly account: string;
  readonly model: string;
}

export function liteTopicName(
  { tier, tenant, account, model }: LiteTopicOf,
  maxLength = MAX_LITE_TOPIC_LENGTH,
): string {
  const full = [tier, tenant, account, model].map(encodePart).join('-');
  if (full.length <= maxLength) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, HASH_HEX);
  let prefix = full.slice(0, Math.max(0, maxLength - LONG_MARKER.length - HASH_HEX));
  // Do not end inside an `_hh` escape: a dangling `_` or `_h` would read differently.
  const lastEscape = prefix.lastIndexOf('_');
  if (lastEscape >= 0 && prefix.length - lastEscape < 3) prefix = prefix.slice(0, lastEscape);
  return `${prefix}${LONG_MARKER}${hash}`;
}

/**
 * The physical LiteTopic of shard `shard` of a LiteTopic: shard 0 is the LiteTopic
 * itself; shard n > 0 appends `-n`. A name has exactly four `-`-joined parts (or
 * none after its `_x` hash), so a fifth part cannot meet another name. A name with
 * no room for the suffix gives up the end of its readable prefix, never its hash.
 */
export function liteTopicShard(liteTopic: string, shard: number, maxLength = MAX_LITE_TOPIC_LENGTH): string {
  if (shard === 0) return liteTopic;
  const suffix = `-${shard}`;
  if (liteTopic.length + suffix.length <= maxLength) return liteTopic + suffix;
  const marker = liteTopic.lastIndexOf(LONG_MARKER);
  // Only hashed names reach the limit: liteTopicName caps short ones at it exactly.
  const tail =
    marker >= 0 ? liteTopic.slice(marker) : createHash('sha256').update(liteTopic).digest('hex').slice(0, HASH_HEX);
  let prefix = liteTopic.slice(
    0,
    Math.max(0, maxLength - suffix.length - tail.length - (marker >= 0 ? 0 : LONG_MARKER.length)),
  );
  const lastEscape = prefix.lastIndexOf('_');
  if (lastEscape >= 0 && prefix.length - lastEscape < 3) prefix = prefix.slice(0, lastEscape);
  return `${prefix}${marker >= 0 ? '' : LONG_MARKER}${tail}${suffix}`;
}
