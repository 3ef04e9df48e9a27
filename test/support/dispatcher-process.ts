import { spawn } from 'node:child_process';
import { testPolicy } from './local-sluice.js';

/** `functions/dispatcher/main.ts` as a child process on the test policy, its JSON logs collected. */
export function spawnDispatcher(gpuBaseUrl: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/dispatcher/main.ts'], {
    env: {
      ...process.env,
      SLUICE_POLICY_JSON: JSON.stringify(testPolicy(gpuBaseUrl)),
      SLUICE_METRICS_PORT: '0',
      SLUICE_LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let logs = '';
  child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, logs: () => logs };
}
