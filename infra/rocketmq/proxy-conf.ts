/**
 * Proxy settings Sluice's dispatchers depend on, shared by the Broker stack's proxy
 * (infra/constructs/rocketmq-scripts.ts) and the local one (scripts/rocketmq/config.ts).
 *
 * The receive batch: a lite pop takes up to this many messages, as many as it can from
 * the first LiteTopic with an event, and that LiteTopic is popped again only once the
 * whole batch is settled; the client runs a FIFO batch one message after another, and a
 * Suspend of one message suspends the rest of its batch (one RPC each). At the proxy's
 * default of 32, a backlogged LiteTopic came as 32 messages, the client's cache (200)
 * held about six LiteTopics at once, and the others waited: at most 6 messages were in
 * hand for 50 handlers. In the first seed's isolation (`npm run bench -- queue --parts 1
 * --receive-batch N`, 40 of 50 LiteTopics throttled) the healthy ones kept, with Suspend,
 * 0 %, 0 % and 32 % of their unthrottled rate at 32; 20 % at 1 (every message its own
 * pop, and the broker's pops are what two cores run out of); 80 % at 2; 27 % at 8; and
 * 80 %, 79 %, 87 % in three runs at 4. Figures from those runs: scripts/rocketmq/README.md.
 */
export const PROXY_CONSUMER_SETTINGS = {
  grpcClientConsumerLongPollingBatchSize: 4,
  // The proxy caches the parent topic's route, its config and the group's config, and
  // refreshes an entry read 20 s (default) after it was loaded. While the broker is away
  // those entries become "not found", so after a broker restart every receive and every
  // lite subscription sync failed with "No topic route info" or "group not found" for up
  // to 20 s more, twice over. In the chaos bench's broker-restart (`npm run bench --
  // chaos --faults broker-restart`, with the adapter's lite subscription sync) the
  // requests redriven from the spillover were all answered 65–70 s into the run at 20 s and
  // within 35–40 s at 2 s. The entries are few (one per parent topic and group, not per
  // LiteTopic), so a refresh every 2 s costs little.
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
