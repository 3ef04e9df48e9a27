import { remotingRequest } from './remoting.ts';

// Topic and group administration straight to the broker over the remoting protocol,
// as mqadmin's updateTopic / updateSubGroup do (MQClientAPIImpl.createTopic and
// createSubscriptionGroup in rocketmq-client 5.5.0). An mqadmin JVM costs ~5 s of
// CPU per call on a 2-core runner; this costs milliseconds, so tests can afford a
// fresh topic and group each.
const UPDATE_AND_CREATE_TOPIC = 17;
const UPDATE_AND_CREATE_SUBSCRIPTIONGROUP = 200;
const PERM_READ_WRITE = 6;

async function expectSuccess(what: string, call: Promise<{ code: number; remark: string | null }>): Promise<void> {
  const res = await call;
  if (res.code !== 0) throw new Error(`${what} refused by the broker: code ${res.code} ${res.remark ?? ''}`);
}

export interface LiteTopicOptions {
  /** Minutes a LiteTopic may sit idle before the broker reclaims it (broker minimum 15). */
  readonly expirationMinutes: number;
}

export function createLiteParentTopic(brokerAddr: string, topic: string, opts: LiteTopicOptions): Promise<void> {
  // Both attributes in one call: attributes left out are not added later by an update
  // without rewriting the topic, and empty values are refused.
  return expectSuccess(
    `create LITE topic ${topic}`,
    remotingRequest(brokerAddr, UPDATE_AND_CREATE_TOPIC, {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: '8',
      writeQueueNums: '8',
      perm: String(PERM_READ_WRITE),
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: '0',
      order: 'false',
      attributes: `+message.type=LITE,+lite.topic.expiration=${opts.expirationMinutes}`,
    }),
  );
}

export interface WildcardGroupOptions {
  /** Deliveries before a message goes to %DLQ%<group>, the first one included. */
  readonly maxAttempts: number;
  /**
   * consumeMessageOrderly. The broker pops a LiteTopic as a FIFO queue either way (one
   * received batch at a time, a Suspend pauses the whole LiteTopic); true makes the
   * client handle that batch one message at a time, false all at once (README,
   * "Non-orderly groups").
   */
  readonly orderly: boolean;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  /** Capacity of each consumer's LiteTopic event queue on the broker. */
  readonly maxClientEvents?: number;
}

export function createWildcardGroup(
  brokerAddr: string,
  group: string,
  parentTopic: string,
  opts: WildcardGroupOptions,
): Promise<void> {
  const config = {
    groupName: group,
    consumeEnable: true,
    consumeFromMinEnable: false,
    consumeBroadcastEnable: false,
    consumeMessageOrderly: opts.orderly,
    retryQueueNums: 1,
    // The proxy hands clients maxAttempts = retryMaxTimes + 1.
    retryMaxTimes: Math.max(0, opts.maxAttempts - 1),
    // rocketmq-client-nodejs 1.0.8 turns the default CUSTOMIZED policy into a single
    // attempt, so the group carries an EXPONENTIAL one.
    groupRetryPolicy: {
      type: 'EXPONENTIAL',
      exponentialRetryPolicy: { initial: opts.retryInitialMs, max: opts.retryMaxMs, multiplier: 2 },
    },
    brokerId: 0,
    whichBrokerWhenConsumeSlowly: 1,
    notifyConsumerIdsChangedEnable: true,
    // Keys keep mqadmin's "+" (add) prefix: the broker applies them as a modification.
    // Any value marks the group wildcard; the attribute's presence is what counts.
    attributes: {
      '+lite.bind.topic': parentTopic,
      '+lite.sub.wildcard': 'true',
      // Per-consumer queue of "LiteTopic has messages" events (default 400). When it
      // is full, a wildcard group only learns of further LiteTopics from a full scan
      // every liteEventFullDispatchDelayTimeForWildcardGroup: with thousands of fresh
      // LiteTopics that drained about 100 LiteTopics per 10 s.
      '+lite.sub.client.max.event.cnt': String(opts.maxClientEvents ?? 50_000),
    },
  };
  return expectSuccess(
    `create wildcard group ${group}`,
    remotingRequest(brokerAddr, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, Buffer.from(JSON.stringify(config))),
  );
}

const GET_ALL_SUBSCRIPTIONGROUP_CONFIG = 201;
const GET_ALL_TOPIC_CONFIG = 21;

/** The broker's stored configs, for checking what the create calls left behind. */
export async function brokerConfigs(brokerAddr: string): Promise<{ topics: string; groups: string }> {
  const [topics, groups] = await Promise.all([
    remotingRequest(brokerAddr, GET_ALL_TOPIC_CONFIG),
    remotingRequest(brokerAddr, GET_ALL_SUBSCRIPTIONGROUP_CONFIG),
  ]);
  return { topics: topics.body.toString(), groups: groups.body.toString() };
}

const UPDATE_BROKER_CONFIG = 25;

/** Changes broker settings at runtime (what `mqadmin updateBrokerConfig` does). */
export function updateBrokerConfig(
  brokerAddr: string,
  values: Record<string, string | number | boolean>,
): Promise<void> {
  const body = Object.entries(values)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
  return expectSuccess(
    'update broker config',
    remotingRequest(brokerAddr, UPDATE_BROKER_CONFIG, {}, Buffer.from(body)),
  );
}
