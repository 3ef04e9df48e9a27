import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { testPolicy } from '../../support/local-sluice.js';

describe('dispatcher container entry', () => {
  it('starts on its configuration, serves /metrics, and drains on SIGTERM', async () => {
    const env = {
      ...process.env,
      SLUICE_POLICY_JSON: JSON.stringify(testPolicy('http://127.0.0.1:9/v1')),
      SLUICE_METRICS_PORT: '0',
      SLUICE_LOG_LEVEL: 'info',
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'functions/dispatcher/main.ts'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let logs = '';
    child.stderr.on('data', (d: Buffer) => (logs += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 200 && !logs.includes('dispatcher consuming'); i++) await new Promise((r) => setTimeout(r, 50));
      const line = JSON.parse(logs.split('\n').find((l) => l.includes('dispatcher consuming'))!) as { metrics: string };
      const res = await fetch(line.metrics.replace('0.0.0.0', '127.0.0.1'));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('sluice_');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(logs).toContain('drained');
  }, 30_000);
});
