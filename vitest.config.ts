import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// Each real service (redis-server, RocketMQ, ElasticMQ, moto...) has its own global
// setup file in test/setup/; the integration project starts all of them once and
// hands their addresses to tests through `inject()`.
const serviceSetups = readdirSync(new URL('./test/setup/', import.meta.url))
  .filter((f) => f.endsWith('.setup.ts'))
  .sort()
  .map((f) => `test/setup/${f}`);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/**/*.int.test.ts', 'node_modules/**'],
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.int.test.ts'],
          globalSetup: serviceSetups,
          testTimeout: 120_000,
          hookTimeout: 300_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
