/**
 * Builds the parts a process runs on from its configuration. Each part has one
 * place where its implementation is chosen.
 */
import type { Clock } from '../../lib/clock/clock.js';
import { parsePolicy, type Policy } from '../../lib/policy/schema.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import type { LiteQueue } from '../../lib/queue/types.js';
import { createEmbeddedResults } from '../../lib/results/embedded.js';
import type { ResultChannel } from '../../lib/results/types.js';
import { createEmbeddedStore } from '../../lib/store/embedded.js';
import type { RateStore } from '../../lib/store/types.js';
import type { Config } from './config.js';

export interface Parts {
  readonly store: RateStore;
  readonly queue: LiteQueue;
  readonly results: ResultChannel;
  readonly policy: () => Policy;
  close(): Promise<void>;
}

export function createParts(config: Config, clock: Clock): Parts {
  if (!config.SLUICE_POLICY_JSON) throw new Error('no policy: set SLUICE_POLICY_JSON');
  const policy = parsePolicy(JSON.parse(config.SLUICE_POLICY_JSON));
  const store = createEmbeddedStore(clock);
  const queue = new EmbeddedLiteQueue({ clock });
  const results = createEmbeddedResults({ clock });
  return {
    store,
    queue,
    results,
    policy: () => policy,
    async close() {
      await queue.close();
      await results.close();
      await store.close();
    },
  };
}
