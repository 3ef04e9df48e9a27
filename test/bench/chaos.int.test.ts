/**
 * The chaos bench at its small size, every fault: nothing lost, nothing answered
 * twice, one GPU call per completed request (the injected 503s aside), no
 * reservoir place held at rest, no edge 5xx, nothing dead-lettered by SQS on its
 * own. It starts its own redis-server (append-only), RocketMQ and ElasticMQ,
 * because it kills and stops them.
 */
import { describe, expect, it } from 'vitest';
import { FAULTS, SIZES, runChaos, type FaultRow } from '../../bench/chaos.js';

describe('chaos bench (small)', () => {
  it('keeps every promise under each fault', { timeout: 40 * 60_000 }, async () => {
    const rows: FaultRow[] = await runChaos({
      size: SIZES.small,
      faults: Object.keys(FAULTS),
      log: (line) => console.log(line),
    });
    expect(rows.map((r) => r.fault)).toEqual(Object.keys(FAULTS));
    for (const row of rows) {
      const got = { ...row, statuses: undefined };
      expect(row.accepted, row.fault).toBeGreaterThan(0);
      expect(row.completed, row.fault).toBeGreaterThan(0);
      expect(got).toMatchObject({
        lost: 0,
        answeredTwice: 0,
        answeredOnce: row.accepted,
        upstreamCallsPerCompleted: 1,
        placesHeldAtRest: 0,
        edge5xx: 0,
        spilloverDeadLetters: 0,
      });
    }
  });
});
