import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_KEYS, DEMO_MODEL } from '../../../functions/local/demo-policy.js';
import { startLocalSluice, type LocalSluice } from '../../../functions/local/sluice.js';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { silentLogger } from '../../../lib/telemetry/log.js';

// The demo case of issue #12: `npm start`, one batch account sends 40 requests to an
// otherwise idle 8-slot model. Batch reserves 2 of the 8; the idle realtime and offline
// shares are lent, so every slot works, and no request polls the gate with Suspends.
describe('npm start: one batch account on an idle 8-slot model', () => {
  let sluice: LocalSluice;
  beforeAll(async () => {
    sluice = await startLocalSluice({
      clock: systemClock,
      log: silentLogger,
      port: 0,
      gpu: { models: [DEMO_MODEL], slots: 8, baseTokenMs: 5, minOutputTokens: 32, maxOutputTokens: 64 },
    });
  });
  afterAll(() => sluice.close());

  it('uses all 8 slots, answers all 40, and suspends nothing for capacity', async () => {
    const send = () =>
      fetch(`${sluice.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${DEMO_KEYS.batch}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: DEMO_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 64 }),
      }).then((r) => r.status);
    const statuses = await Promise.all(Array.from({ length: 40 }, send));
    expect(statuses).toEqual(Array(40).fill(200));
    expect(sluice.gpu.stats().peakBusy).toBe(8);
    expect(sluice.gpu.stats().served).toBe(40);
    const metrics = await (await fetch(`${sluice.url}/metrics`)).text();
    expect(metrics).toContain('# HELP sluice_suspended_total');
    const capacity = metrics
      .split('\n')
      .find((l) => l.startsWith('sluice_suspended_total') && l.includes('cause="capacity"'));
    expect(capacity === undefined || Number(capacity.split(' ').at(-1)) === 0, capacity).toBe(true);
  });
});
