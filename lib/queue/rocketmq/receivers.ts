/**
 * LitePushConsumers per subscription (`RocketMQLiteQueueOptions.receivers`), each with
 * its own long poll. The client keeps one receive in flight per consumer and a receive
 * returns at most the proxy's batch of one LiteTopic, so with a single consumer the
 * re-pops of throttled LiteTopics take turns with the healthy ones: the first seed's
 * isolation on the real broker (`npm run bench -- queue --parts 1 --receivers N`) is
 * where this number comes from. Kept apart from queue.ts so the runtime's configuration
 * can take it as its default without loading the client.
 */
export const DEFAULT_RECEIVERS = 4;
