import type { TestProject } from 'vitest/node';
import { serveControl } from '../../scripts/rocketmq/control.ts';
import { startRocketMQ } from '../../scripts/rocketmq/index.ts';

export interface ProvidedRocketMQ {
  /** Proxy gRPC `host:port` for rocketmq-client-nodejs. */
  readonly endpoints: string;
  readonly namesrv: string;
  /** The LITE parent topic and wildcard group created at start (sluice-requests, sluice-dispatchers). */
  readonly parentTopic: string;
  readonly consumerGroup: string;
  /** Base URL of the control endpoint (scripts/rocketmq/control.ts): per-test topics, broker kill/restart. */
  readonly controlUrl: string;
  readonly version: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    rocketmq: ProvidedRocketMQ;
  }
}

/**
 * Starts namesrv, broker and a cluster-mode proxy once for the integration project.
 * A start failure fails the run: tests that need the broker never skip.
 */
export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const mq = await startRocketMQ({ log: (line) => console.log(`[rocketmq] ${line}`) });
  const control = await serveControl(mq);
  provide('rocketmq', {
    endpoints: mq.endpoints,
    namesrv: mq.namesrv,
    parentTopic: mq.parentTopic,
    consumerGroup: mq.consumerGroup,
    controlUrl: control.url,
    version: mq.version,
  });
  return async () => {
    await control.close();
    await mq.stop();
  };
}
