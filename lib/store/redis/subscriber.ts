/**
 * One subscriber connection per store for release notices (a Redis connection in
 * subscriber mode takes no other commands), opened on the first watch. Several
 * watchers of one channel share one SUBSCRIBE.
 */
import type { Redis } from 'ioredis';

export function createSubscriber(redis: Redis): {
  subscribe: (channel: string, onMessage: () => void) => () => void;
  close: () => void;
} {
  let sub: Redis | undefined;
  const listeners = new Map<string, Set<() => void>>();
  const connection = () => {
    if (sub) return sub;
    sub = redis.duplicate({ enableOfflineQueue: true });
    sub.on('error', () => {});
    sub.on('message', (channel: string) => {
      for (const fn of listeners.get(channel) ?? []) fn();
    });
    return sub;
  };
  return {
    subscribe(channel, onMessage) {
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        connection()
          .subscribe(channel)
          .catch(() => {});
      }
      const fn = () => onMessage();
      set.add(fn);
      return () => {
        set.delete(fn);
        if (set.size === 0) {
          listeners.delete(channel);
          sub?.unsubscribe(channel).catch(() => {});
        }
      };
    },
    close() {
      sub?.disconnect();
      sub = undefined;
    },
  };
}
