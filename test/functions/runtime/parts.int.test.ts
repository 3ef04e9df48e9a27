import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createEdgeApp } from '../../../functions/edge/app.js';
import { createGpuSim } from '../../../functions/gpu-sim/app.js';
import { readConfig } from '../../../functions/runtime/config.js';
import { newLeaseId, newRequestId } from '../../../functions/runtime/ids.js';
import { createParts, type Parts } from '../../../functions/runtime/parts.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createDispatcher } from '../../../lib/dispatch/dispatcher.js';
import { ensureSluiceQueues } from '../../../lib/queue/sqs/index.js';
import type { Subscription } from '../../../lib/queue/types.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createUpstreamClient } from '../../../lib/upstream/client.js';
import { controlClient } from '../../../scripts/rocketmq/control.ts';
import { chat, fastGpu, KEYS, testPolicy } from '../../support/local-sluice.js';

// The AWS layout, on local services: an edge outside the broker's network that spills
// every envelope to SQS, a dispatcher that redrives the spillover into RocketMQ and
// consumes it, and Redis between them for limits and results.
describe('deployed parts: edge -> SQS spillover -> redrive -> RocketMQ -> dispatcher -> Redis results', () => {
  let gpuServer: ServerType;
  let edgeParts: Parts;
  let dispatcherParts: Parts;
  let subscription: Subscription;
  let app: ReturnType<typeof createEdgeApp>;

  beforeAll(async () => {
    const sqsInfo = inject('elasticmq');
    process.env.AWS_ACCESS_KEY_ID ??= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
    const id = randomUUID().slice(0, 8);
    const queues = await ensureSluiceQueues(
      new SQSClient({ endpoint: sqsInfo.endpoint, region: sqsInfo.region }),
      `parts-${id}`,
    );
    const mq = inject('rocketmq');
    const control = controlClient(mq.controlUrl);
    await control.createLiteTopic(`parts-${id}`);
    await control.createWildcardGroup(`parts-g-${id}`, `parts-${id}`, { orderly: true, maxAttempts: 16 });

    const gpu = createGpuSim({ ...fastGpu, clock: systemClock });
    const gpuUrl = await new Promise<string>((resolve) => {
      gpuServer = serve({ fetch: gpu.app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) =>
        resolve(`http://127.0.0.1:${info.port}/v1`),
      );
    });
    const common = {
      SLUICE_POLICY_JSON: JSON.stringify(testPolicy(gpuUrl)),
      SLUICE_REDIS_URL: inject('redisUrl'),
      SLUICE_SPILLOVER_QUEUE_URL: queues.spilloverUrl,
      SLUICE_DLQ_URL: queues.deadLetterUrl,
      SLUICE_SQS_ENDPOINT: sqsInfo.endpoint,
      AWS_REGION: sqsInfo.region,
    };
    edgeParts = await createParts(readConfig(common), systemClock, silentLogger, { role: 'edge' });
    dispatcherParts = await createParts(
      readConfig({
        ...common,
        SLUICE_ROCKETMQ_ENDPOINTS: mq.endpoints,
        SLUICE_ROCKETMQ_TOPIC: `parts-${id}`,
        SLUICE_ROCKETMQ_GROUP: `parts-g-${id}`,
      }),
      systemClock,
      silentLogger,
      { role: 'dispatcher' },
    );
    const dispatch = createDispatcher({
      clock: systemClock,
      store: dispatcherParts.store,
      results: dispatcherParts.results,
      upstream: createUpstreamClient(),
      policy: dispatcherParts.policy,
      log: silentLogger,
      newId: newLeaseId,
      deadLetters: dispatcherParts.deadLetters,
    });
    subscription = dispatcherParts.queue.subscribe(dispatch, { concurrency: 8 });
    app = createEdgeApp({ clock: systemClock, ...edgeParts, newId: newRequestId, log: silentLogger });
  }, 120_000);

  afterAll(async () => {
    await subscription?.close();
    await dispatcherParts?.close();
    await edgeParts?.close();
    gpuServer?.close();
  });

  it('wires what the environment names', () => {
    expect(edgeParts.describe).toMatchObject({ store: 'redis-tcp', results: 'redis-tcp', deadLetters: 'sqs' });
    expect(edgeParts.describe.queue).toMatch(/^sqs spillover only/);
    expect(dispatcherParts.describe.queue).toMatch(/^rocketmq:.* \+ sqs spillover \(redriving\)$/);
  });

  it('answers a chat completion that travelled the whole way', async () => {
    const res = await app.request('/v1/chat/completions', chat(KEYS.a1));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { object: string }).object).toBe('chat.completion');
    const streamed = await app.request(
      '/v1/chat/completions',
      chat(KEYS.b1, { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toMatch(/data: \[DONE\]\n\n$/);
  }, 120_000);
});
