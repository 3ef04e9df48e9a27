/**
 * Builds the parts a process runs on from its configuration. Each part has one
 * place where its implementation is chosen.
 */
import { SSMClient } from '@aws-sdk/client-ssm';
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';
import { Redis as UpstashRedis } from '@upstash/redis';
import type { Clock } from '../../lib/clock/clock.js';
import { createPolicyHolder, type PolicyHolder } from '../../lib/policy/holder.js';
import { memorySource, type PolicySource } from '../../lib/policy/source.js';
import { fileSource } from '../../lib/policy/sources/file.js';
import { ssmSource } from '../../lib/policy/sources/ssm.js';
import type { Policy } from '../../lib/policy/schema.js';
import { EmbeddedLiteQueue } from '../../lib/queue/embedded.js';
import type { ReceiveProbe } from '../../lib/queue/rocketmq/receive-probe.js';
import { ShardedLiteQueue } from '../../lib/queue/sharded.js';
import type { DeadLetter, LiteQueue } from '../../lib/queue/types.js';
import { RedriveWorker, Spillover, SpillingLiteQueue, SqsDeadLetterQueue } from '../../lib/queue/sqs/index.js';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetterSink } from '../../lib/dispatch/types.js';
import { encodeEnvelope } from '../../lib/envelope.js';
import { createEmbeddedResults } from '../../lib/results/embedded.js';
import { createRedisResults, ioredisTransport, upstashTransport } from '../../lib/results/redis.js';
import type { ResultChannel } from '../../lib/results/types.js';
import { createEmbeddedStore } from '../../lib/store/embedded.js';
import { createGuardedStore } from '../../lib/store/guarded.js';
import { connectRedis, createTcpStore, ioredisEvalClient } from '../../lib/store/redis/tcp.js';
import { createUpstashStore, upstashEvalClient } from '../../lib/store/redis/upstash.js';
import { createEmbeddedAttempts, type AttemptStore } from '../../lib/store/attempts.js';
import { createRedisAttempts } from '../../lib/store/redis/attempts.js';
import type { RateStore } from '../../lib/store/types.js';
import type { Logger } from '../../lib/telemetry/log.js';
import type { Config } from './config.js';
import { upstashKeeper, withLastGoodPolicy } from './last-good-policy.js';
import { rocketmqAccess, trustOnlyForGrpc } from './rocketmq-access.js';

export type Role = 'edge' | 'dispatcher';

export interface Parts {
  readonly store: RateStore;
  /** Attempt records and failure counts by request id, shared by every dispatcher. */
  readonly attempts: AttemptStore;
  readonly queue: LiteQueue;
  /** Where envelopes that failed for good go (SQS in AWS; the log otherwise). */
  readonly deadLetters: DeadLetterSink;
  readonly results: ResultChannel;
  readonly policy: () => Policy;
  readonly policySource: PolicySource;
  readonly policyHolder: PolicyHolder;
  /** Which implementation each part runs on, for the start-up log line. */
  readonly describe: Record<string, string>;
  /** Messages waiting in a LiteTopic, where the queue can tell (the embedded engine). */
  readonly depth?: (liteTopic: string) => number;
  close(): Promise<void>;
}

function policySource(config: Config): PolicySource {
  if (config.SLUICE_POLICY_SSM_PATH) {
    return ssmSource({ client: new SSMClient({ region: config.AWS_REGION }), path: config.SLUICE_POLICY_SSM_PATH });
  }
  if (config.SLUICE_POLICY_FILE) return fileSource(config.SLUICE_POLICY_FILE);
  if (config.SLUICE_POLICY_JSON) return memorySource(JSON.parse(config.SLUICE_POLICY_JSON));
  throw new Error('no policy: set SLUICE_POLICY_SSM_PATH, SLUICE_POLICY_FILE or SLUICE_POLICY_JSON');
}

async function upstashClient(config: Config): Promise<UpstashRedis | undefined> {
  let url = config.UPSTASH_REDIS_REST_URL;
  let token = config.UPSTASH_REDIS_REST_TOKEN;
  if ((!url || !token) && config.SLUICE_UPSTASH_SECRET_ID) {
    const secret = (await getSecret(config.SLUICE_UPSTASH_SECRET_ID, { transform: 'json', maxAge: 300 })) as
      { url?: string; token?: string } | undefined;
    url = secret?.url;
    token = secret?.token;
    if (!url || !token)
      throw new Error(`secret ${config.SLUICE_UPSTASH_SECRET_ID} must hold JSON {"url": ..., "token": ...}`);
  }
  // One retry: the guarded store's timeout already bounds a call, and background retries would outlive it.
  return url && token
    ? new UpstashRedis({ url, token, automaticDeserialization: false, retry: { retries: 1 } })
    : undefined;
}

/**
 * The queue. With a broker: RocketMQ, and with a spillover queue the edge spills
 * there when the broker refuses and the dispatchers redrive it back. An edge that
 * has a spillover queue but no broker endpoint (the default AWS layout: the edge
 * stays outside the VPC) sends everything through the spillover.
 */
async function createQueue(
  config: Config,
  clock: Clock,
  log: Logger,
  options: PartsOptions,
  deadLetters: (d: DeadLetter) => Promise<void>,
) {
  const { role = 'edge', onSpill } = options;
  const spilloverAt = (queueUrl: string, sqs: SQSClient) => new Spillover({ sqs, queueUrl, onSpill });
  const sqs =
    config.SLUICE_SPILLOVER_QUEUE_URL || config.SLUICE_DLQ_URL
      ? new SQSClient({ region: config.AWS_REGION, endpoint: config.SLUICE_SQS_ENDPOINT })
      : undefined;
  const closers: Array<() => Promise<void>> = [];
  let queue: LiteQueue;
  let describe: string;
  if (config.SLUICE_ROCKETMQ_ENDPOINTS) {
    const access = await rocketmqAccess(config);
    // Before the client opens its first channel.
    trustOnlyForGrpc(config);
    // Loaded only when used: its native crc32 module stays out of the edge bundle (infra/stacks/edge-stack.ts).
    const { RocketMQLiteQueue } = await import('../../lib/queue/rocketmq/index.js');
    const rocketmq = new RocketMQLiteQueue({
      endpoints: config.SLUICE_ROCKETMQ_ENDPOINTS,
      parentTopic: config.SLUICE_ROCKETMQ_TOPIC,
      consumerGroup: config.SLUICE_ROCKETMQ_GROUP,
      access,
      clock,
      log,
      onDeadLetter: deadLetters,
      receivers: config.SLUICE_ROCKETMQ_RECEIVERS,
      ...(options.rocketmqProbe ? { probe: options.rocketmqProbe } : {}),
    });
    const shards = config.SLUICE_ROCKETMQ_LITETOPIC_SHARDS;
    // Redrives from the spillover go through the shards too.
    const broker: LiteQueue = shards > 1 ? new ShardedLiteQueue(rocketmq, { clock, shards }) : rocketmq;
    queue = broker;
    describe = `rocketmq:${config.SLUICE_ROCKETMQ_ENDPOINTS}${shards > 1 ? ` (${shards} shards per LiteTopic)` : ''}`;
    if (config.SLUICE_SPILLOVER_QUEUE_URL && sqs) {
      const spillover = spilloverAt(config.SLUICE_SPILLOVER_QUEUE_URL, sqs);
      queue = new SpillingLiteQueue(broker, spillover, {
        clock,
        onSpill: (liteTopic, cause) =>
          log.warn({ liteTopic, err: cause.message }, 'broker unavailable: envelope spilled to SQS'),
      });
      describe += ' + sqs spillover';
      if (role === 'dispatcher') {
        const redrive = new RedriveWorker({
          sqs,
          queueUrl: config.SLUICE_SPILLOVER_QUEUE_URL,
          target: broker,
          clock,
          onUndeliverable: deadLetters,
          onError: (err) => log.warn({ err: String(err) }, 'redrive failed; retrying'),
          // The id, so a request can be followed from the edge's spill to the broker.
          onRedriven: (liteTopic, body) =>
            log.info({ id: envelopeIdOf(body), liteTopic }, 'redriven from the spillover into the broker'),
        });
        redrive.start();
        closers.push(() => redrive.stop());
        describe += ' (redriving)';
      }
    }
  } else if (config.SLUICE_SPILLOVER_QUEUE_URL && sqs && role === 'edge') {
    queue = new SpillOnlyQueue(spilloverAt(config.SLUICE_SPILLOVER_QUEUE_URL, sqs));
    describe = 'sqs spillover only (dispatchers redrive into the broker)';
  } else {
    const embedded = new EmbeddedLiteQueue({
      clock,
      maxInFlightPerTopic: config.SLUICE_INFLIGHT_PER_LITETOPIC,
      onDeadLetter: (d) => void deadLetters(d),
    });
    queue = embedded;
    describe = 'embedded';
    return { queue, describe, sqs, closers, depth: (liteTopic: string) => embedded.depth(liteTopic) };
  }
  return { queue, describe, sqs, closers, depth: undefined };
}

function envelopeIdOf(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { id?: unknown } | null)?.id as string | undefined;
  } catch {
    return undefined;
  }
}

/** The edge's queue when it cannot reach the broker: every envelope goes to the spillover. */
class SpillOnlyQueue implements LiteQueue {
  constructor(private readonly spillover: Spillover) {}
  send(liteTopic: string, body: string) {
    return this.spillover.spill(liteTopic, body);
  }
  subscribe(): never {
    throw new Error('this edge has no broker to consume from: dispatchers redrive the spillover into RocketMQ');
  }
  async close() {}
}

export interface PartsOptions {
  readonly role?: Role;
  /**
   * For messages the engine itself gives up on (the handler crashed or hung on every
   * attempt), so the client still gets an answer; it files the dead letter.
   */
  readonly settleDeadLetter?: (deadLetter: DeadLetter) => Promise<void>;
  /** Told of every envelope sent to the SQS spillover (telemetry, the spillover alert). */
  readonly onSpill?: (liteTopic: string, body: string) => void;
  /** A policy source of the caller's own (`npm start`: its file or the demo policy) instead of the configured one. */
  readonly policySource?: PolicySource;
  /** A store the caller built (tests, `npm start` with a store of its own) instead of the configured one. */
  readonly store?: RateStore;
  /** Counts what the RocketMQ consumer receives and how long it waited (benchmarks). */
  readonly rocketmqProbe?: ReceiveProbe;
}

export async function createParts(
  config: Config,
  clock: Clock,
  log: Logger,
  options: PartsOptions = {},
): Promise<Parts> {
  const { settleDeadLetter } = options;
  const upstash = options.store ? undefined : await upstashClient(config);
  const source =
    options.policySource ??
    (upstash && config.SLUICE_POLICY_SSM_PATH
      ? withLastGoodPolicy(
          policySource(config),
          upstashKeeper(upstash),
          `sluice:${config.SLUICE_STAGE}:policy:last-good`,
          log,
        )
      : policySource(config));
  const holder = await createPolicyHolder({
    source,
    clock,
    log,
    // Files and memory notify on change; SSM is re-read on a timer.
    refreshMs: config.SLUICE_POLICY_SSM_PATH ? config.SLUICE_POLICY_REFRESH_MS : 0,
  });

  let shared: RateStore | undefined;
  let results: ResultChannel;
  let attempts: AttemptStore = createEmbeddedAttempts(clock);
  const closers: Array<() => Promise<void>> = [];
  const describe: Record<string, string> = { policy: source.name };
  if (options.store) {
    results = createEmbeddedResults({ clock });
    describe.store = 'given';
    describe.results = 'embedded';
  } else if (upstash) {
    shared = createUpstashStore({ redis: upstash });
    results = createRedisResults({ transport: upstashTransport(upstash), clock });
    attempts = createRedisAttempts(upstashEvalClient(upstash));
    describe.store = describe.results = 'upstash-rest';
  } else if (config.SLUICE_REDIS_URL) {
    const redis = await connectRedis(config.SLUICE_REDIS_URL);
    shared = await createTcpStore({ redis });
    results = createRedisResults({ transport: ioredisTransport(redis), clock });
    attempts = createRedisAttempts(ioredisEvalClient(redis));
    closers.push(async () => redis.disconnect());
    describe.store = describe.results = 'redis-tcp';
  } else {
    results = createEmbeddedResults({ clock });
    describe.store = describe.results = 'embedded';
  }
  const store = options.store
    ? options.store
    : shared
      ? createGuardedStore({
          primary: shared,
          clock,
          mode: config.SLUICE_STORE_FAILURE_MODE,
          timeoutMs: config.SLUICE_STORE_TIMEOUT_MS,
          log,
        })
      : createEmbeddedStore(clock);

  // Dead letters: the engine's own (handler crashed on every attempt) are settled by the
  // dispatcher's entry point; this sink is where their envelopes and reasons end up.
  let sqsDeadLetters: SqsDeadLetterQueue | undefined;
  const engineDeadLetters = async (d: DeadLetter) => {
    log.warn({ liteTopic: d.message.liteTopic, reason: d.reason }, 'message dead-lettered');
    if (settleDeadLetter) await settleDeadLetter(d);
    else await sqsDeadLetters?.put(d);
  };
  const built = await createQueue(config, clock, log, options, (d) => engineDeadLetters(d));
  if (config.SLUICE_DLQ_URL && built.sqs)
    sqsDeadLetters = new SqsDeadLetterQueue({ sqs: built.sqs, queueUrl: config.SLUICE_DLQ_URL });
  const queue = built.queue;
  const stopFirst = built.closers;
  describe.queue = built.describe;
  describe.deadLetters = sqsDeadLetters ? 'sqs' : 'log';
  const deadLetters: DeadLetterSink = {
    async put(envelope, reason) {
      log.warn({ id: envelope.id, liteTopic: envelope.liteTopic, reason }, 'request failed for good');
      await sqsDeadLetters?.put({
        message: { messageId: envelope.id, liteTopic: envelope.liteTopic, body: encodeEnvelope(envelope), attempt: 0 },
        reason,
      });
    },
  };

  return {
    store,
    attempts,
    queue,
    deadLetters,
    results,
    policy: () => holder.current(),
    policySource: source,
    policyHolder: holder,
    describe,
    ...(built.depth ? { depth: built.depth } : {}),
    async close() {
      holder.close();
      for (const stop of stopFirst) await stop();
      await queue.close();
      await results.close();
      // A store the caller gave is the caller's to close.
      if (!options.store) await store.close();
      for (const close of closers) await close();
    },
  };
}
