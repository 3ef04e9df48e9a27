/**
 * The RateStore over Redis, whatever carries the commands: every operation is
 * one script call through safeEval. Time comes from Redis TIME inside the
 * scripts, so the clocks of the edge instances and dispatchers do not matter.
 * A clock can be injected instead (simulations, the conformance suite's
 * virtual-time cases); it then replaces TIME for every call of this store.
 */
import type { Clock } from '../../clock/clock.js';
import type { RateStore } from '../types.js';
import { redisAggregateOps } from './aggregate.js';
import {
  admitScript,
  leaveReservoirScript,
  reconcileScript,
  reservoirDepthScript,
  reservoirPlacesScript,
  shedReservoirScript,
} from './admit.js';
import { paceScript } from './pace.js';
import { sendBackScript } from './send-back.js';
import type { EvalClient } from './safe-eval.js';
import { acquireSlotScript, releaseSlotScript, slotReleasedChannel } from './slot.js';

export interface RedisStoreOptions {
  /** Replaces Redis TIME; leave unset in production. */
  readonly clock?: Clock;
  /**
   * Subscribes to a channel (TCP Redis: a connection in subscriber mode); returns
   * the unsubscribe. Unset (Upstash REST): slot releases are not announced.
   */
  readonly subscribe?: (channel: string, onMessage: () => void) => () => void;
  /** Called by close(): quits the connection if the store owns it. */
  readonly onClose?: () => Promise<void>;
}

export function createRedisStore(client: EvalClient, options: RedisStoreOptions = {}): RateStore {
  const now = () => options.clock?.now();
  return {
    admit: (input) => admitScript(client, input, now()),
    reconcile: (items) => reconcileScript(client, items),
    leaveReservoir: (key) => leaveReservoirScript(client, key),
    reservoirDepth: (key) => reservoirDepthScript(client, key, now()),
    reservoirPlaces: (key, limit) => reservoirPlacesScript(client, key, limit, now()),
    shedReservoir: (key, members) => shedReservoirScript(client, key, members),
    pace: async (input) =>
      (await paceScript(client, { key: input.key, rate: input.rate, burst: input.burst }, now())).waitMs,
    paceReserving: (input) => paceScript(client, input, now()),
    acquireSlot: (request) => acquireSlotScript(client, request, now()),
    releaseSlot: (key, leaseId) => releaseSlotScript(client, key, leaseId),
    ...redisAggregateOps(client, now),
    sendBack: (input) => sendBackScript(client, input, now()),
    watchSlots: (key, onRelease) => options.subscribe?.(slotReleasedChannel(key), onRelease) ?? (() => {}),
    close: async () => {
      await options.onClose?.();
    },
  };
}
