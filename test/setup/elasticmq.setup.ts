import type { TestProject } from 'vitest/node';
import { startElasticMQ } from '../../scripts/elasticmq/index.ts';

export interface ProvidedElasticMQ {
  /** SQS endpoint URL for `new SQSClient({ endpoint, region, credentials })`. */
  readonly endpoint: string;
  readonly region: string;
  readonly version: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    elasticmq: ProvidedElasticMQ;
  }
}

/** ElasticMQ for the SQS spillover and dead-letter tests; a failed start fails the run. */
export default async function setup({ provide }: TestProject): Promise<() => Promise<void>> {
  const mq = await startElasticMQ({ log: (line) => console.log(`[elasticmq] ${line}`) });
  provide('elasticmq', { endpoint: mq.endpoint, region: mq.region, version: mq.version });
  return () => mq.stop();
}
