/**
 * A policy source that keeps the last policy it loaded that passed the schema in the shared
 * store, and answers with it when the source holds an invalid one. A warm process already keeps
 * its last good policy (lib/policy/holder.ts); this covers a cold start, which otherwise has
 * nothing to fall back on and fails every request until someone fixes the parameter. Each
 * fallback is logged as an alert (`policy-invalid`).
 */
import type { PolicySource } from '../../lib/policy/source.js';
import { parsePolicy } from '../../lib/policy/schema.js';
import type { Logger } from '../../lib/telemetry/log.js';

export interface PolicyKeeper {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
}

export function withLastGoodPolicy(source: PolicySource, keeper: PolicyKeeper, key: string, log: Logger): PolicySource {
  let saved: string | undefined;
  return {
    name: source.name,
    save: (policy) => source.save(policy),
    ...(source.watch ? { watch: (onChange: () => void) => source.watch!(onChange) } : {}),
    async load() {
      const doc = await source.load();
      try {
        parsePolicy(doc);
      } catch (err) {
        const kept = await keeper.get(key).catch(() => null);
        const message = err instanceof Error ? err.message : String(err);
        if (kept === null) throw err;
        log.error(
          { event: 'alert', alert: 'policy-invalid', source: source.name, err: message.slice(0, 500) },
          'alert: the policy source holds an invalid policy; using the last good one from the store',
        );
        return JSON.parse(kept) as unknown;
      }
      const text = JSON.stringify(doc);
      if (text !== saved) {
        // Best effort: a store that is down must not stop a valid policy from applying.
        await keeper.set(key, text).then(
          () => (saved = text),
          (e: unknown) => log.warn({ err: String(e) }, 'could not keep the policy in the store'),
        );
      }
      return doc;
    },
  };
}

/** The keeper over an Upstash client that returns raw strings (automaticDeserialization off). */
export function upstashKeeper(redis: {
  get(key: string): Promise<unknown>;
  set(key: string, value: string): Promise<unknown>;
}): PolicyKeeper {
  return {
    get: async (key) => {
      const v = await redis.get(key);
      return typeof v === 'string' ? v : null;
    },
    set: (key, value) => redis.set(key, value),
  };
}
