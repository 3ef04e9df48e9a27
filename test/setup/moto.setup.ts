/**
 * moto's server for the SSM policy source. If it cannot be installed or started,
 * setup throws and the integration tests fail; nothing is skipped.
 */
import type { TestProject } from 'vitest/node';
import { startMoto } from '../../scripts/moto/server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Endpoint URL of moto's server (any AWS service, SSM among them). */
    awsEndpoint: string;
  }
}

export default async function setup({ provide }: Pick<TestProject, 'provide'>): Promise<() => Promise<void>> {
  const moto = await startMoto((m) => process.stderr.write(`[moto.setup] ${m}\n`));
  provide('awsEndpoint', moto.url);
  return () => moto.close();
}
