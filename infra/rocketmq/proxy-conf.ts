/**
 * Proxy settings Sluice's dispatchers depend on, shared by the Broker stack's proxy
 * (infra/constructs/rocketmq-scripts.ts) and the local one (scripts/rocketmq/config.ts).
 *
 * The receive batch: a lite pop takes up to this many messages, as many as it can from
 * the first LiteTopic with an event, and that LiteTopic is popped again only once the
 * whole batch is settled; the client runs a FIFO batch one message after another, and a
 * Suspend of one message suspends the rest of its batch (one RPC each). At the proxy's
 * default of 32 a backlogged LiteTopic fills the client's cache alone, so a few
 * LiteTopics hold every message in hand while handlers idle; at 1 every message is a pop
 * of its own, and the broker's pops are what two cores run out of. 4 kept the healthy
 * LiteTopics of the first seed's isolation best (`npm run bench -- queue --parts 1
 * --receive-batch N`; the runs' figures are in scripts/rocketmq/README.md).
 */
export const PROXY_CONSUMER_SETTINGS = {
  grpcClientConsumerLongPollingBatchSize: 4,
  // The proxy caches the parent topic's route, its config and the group's config, and
  // refreshes an entry read 20 s (default) after it was loaded. While the broker is away
  // those entries become "not found", so after a broker restart every receive and every
  // lite subscription sync failed with "No topic route info" or "group not found" until
  // the refresh, twice over: requests redriven from the spillover waited for it (`npm run
  // bench -- chaos --faults broker-restart` shows when they were answered). The entries
  // are few (one per parent topic and group, not per LiteTopic), so a refresh every 2 s
  // costs little.
  topicRouteServiceCacheRefreshSeconds: 2,
  topicConfigCacheRefreshSeconds: 2,
  subscriptionGroupConfigCacheRefreshSeconds: 2,
} as const;

/**
 * How long a consumer's receive may wait at the proxy for a message: the proxy's own
 * default (grpcClientConsumerMaxLongPollingTimeoutMillis), which the Broker stack keeps. A
 * stopping dispatcher's receives stay in flight that long; its drain must outlast them
 * (infra/config.ts), or a message one of them takes just before exit stays invisible for
 * the broker's default 60 s.
 */
export const PROXY_LONG_POLL_MS = 20_000;
