import { describe, expect, it } from 'vitest';
import { spawnDispatcher } from '../../support/dispatcher-process.js';

describe('dispatcher container entry', () => {
  it('starts on its configuration, serves /metrics, and drains on SIGTERM', async () => {
    const { child, exited, logs } = spawnDispatcher('http://127.0.0.1:9/v1');
    try {
      for (let i = 0; i < 200 && !logs().includes('dispatcher consuming'); i++)
        await new Promise((r) => setTimeout(r, 50));
      const line = JSON.parse(
        logs()
          .split('\n')
          .find((l) => l.includes('dispatcher consuming'))!,
      ) as { metrics: string };
      const res = await fetch(line.metrics.replace('0.0.0.0', '127.0.0.1'));
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('sluice_');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(logs()).toContain('drained');
  }, 30_000);
});
