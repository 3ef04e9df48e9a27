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
import type { LiteQueue } from '../../lib/queue/types.js';
import { createEmbeddedResults } from '../../lib/results/embedded.js';
import { createRedisResults, ioredisTransport, upstashTransport } from '../../lib/results/redis.js';
import type { ResultChannel } from '../../lib/results/types.js';
import { createEmbeddedStore } from '../../lib/store/embedded.js';
import { createGuardedStore } from '../../lib/store/guarded.js';
import { connectRedis, createTcpStore } from '../../lib/store/redis/tcp.js';
import { createUpstashStore } from '../../lib/store/redis/upstash.js';
import type { RateStore } from '../../lib/store/types.js';
import type { Logger } from '../../lib/telemetry/log.js';
import type { Config } from './config.js';

export interface Parts {
  readonly store: RateStore;
  readonly queue: LiteQueue;
  readonly results: ResultChannel;
  readonly policy: () => Policy;
  readonly policySource: PolicySource;
  readonly policyHolder: PolicyHolder;
  /** Which implementation each part runs on, for the start-up log line. */
  readonly describe: Record<string, string>;
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
    const secret = (await getSecret(config.SLUICE_UPSTASH_SECRET_ID, { transform: 'json', maxAge: 300 })) as { url?: string; token?: string } | undefined;
    url = secret?.url;
    token = secret?.token;
    if (!url || !token) throw new Error(`secret ${config.SLUICE_UPSTASH_SECRET_ID} must hold JSON {"url": ..., "token": ...}`);
  }
  // One retry: the guarded store's timeout already bounds a call, and background retries would outlive it.
  return url && token ? new UpstashRedis({ url, token, automaticDeserialization: false, retry: { retries: 1 } }) : undefined;
}

export async function createParts(config: Config, clock: Clock, log: Logger): Promise<Parts> {
  const source = policySource(config);
  const holder = await createPolicyHolder({
    source,
    clock,
    log,
    // Files and memory notify on change; SSM is re-read on a timer.
    refreshMs: config.SLUICE_POLICY_SSM_PATH ? config.SLUICE_POLICY_REFRESH_MS : 0,
  });

  let shared: RateStore | undefined;
  let results: ResultChannel;
  const closers: Array<() => Promise<void>> = [];
  const describe: Record<string, string> = { policy: source.name };
  const upstash = await upstashClient(config);
  if (upstash) {
    shared = createUpstashStore({ redis: upstash });
    results = createRedisResults({ transport: upstashTransport(upstash), clock });
    describe.store = describe.results = 'upstash-rest';
  } else if (config.SLUICE_REDIS_URL) {
    const redis = await connectRedis(config.SLUICE_REDIS_URL);
    shared = await createTcpStore({ redis });
    results = createRedisResults({ transport: ioredisTransport(redis), clock });
    closers.push(async () => redis.disconnect());
    describe.store = describe.results = 'redis-tcp';
  } else {
    results = createEmbeddedResults({ clock });
    describe.store = describe.results = 'embedded';
  }
  const store = shared
    ? createGuardedStore({ primary: shared, clock, mode: config.SLUICE_STORE_FAILURE_MODE, timeoutMs: config.SLUICE_STORE_TIMEOUT_MS, log })
    : createEmbeddedStore(clock);

  const queue = new EmbeddedLiteQueue({ clock, maxInFlightPerTopic: config.SLUICE_INFLIGHT_PER_LITETOPIC });
  describe.queue = 'embedded';

  return {
    store,
    queue,
    results,
    policy: () => holder.current(),
    policySource: source,
    policyHolder: holder,
    describe,
    async close() {
      holder.close();
      await queue.close();
      await results.close();
      await store.close();
      for (const close of closers) await close();
    },
  };
}
