import { describe, expect, it } from 'vitest';
import { MAX_AWAY, RECALL_WORTH_MS, SentBack } from '../../../../lib/dispatch/flow/sent-back.js';

const weights = new Map([
  ['realtime', 6],
  ['batch', 2],
  ['offline', 1],
]);
const weightOf = (tier: string) => weights.get(tier) ?? 0;

describe('SentBack', () => {
  it('takes the heaviest tier first, then the earliest deadline, each once', () => {
    const away = new SentBack();
    const named = (name: string) => async () => (void name, true);
    const recalls = new Map<unknown, string>();
    const add = (name: string, tier: string, deadline: number) => {
      const recall = named(name);
      recalls.set(recall, name);
      away.add({ tier, deadline, returnAt: 60_000, recall });
    };
    add('o1', 'offline', 1_000_000);
    add('b2', 'batch', 500_000);
    add('b1', 'batch', 400_000);
    add('o0', 'offline', 900_000);
    expect(away.take(3, weightOf, 0).map((r) => recalls.get(r))).toEqual(['b1', 'b2', 'o0']);
    expect(away.take(3, weightOf, 0).map((r) => recalls.get(r))).toEqual(['o1']);
    expect(away.size).toBe(0);
  });

  it('forgets requests nearly back or past their deadline, and takes nothing for n of 0', () => {
    const away = new SentBack();
    const recall = async () => true;
    away.add({ tier: 'batch', deadline: 100_000, returnAt: 10_000, recall });
    away.add({ tier: 'batch', deadline: 5_000, returnAt: 60_000, recall });
    away.add({ tier: 'batch', deadline: 100_000, returnAt: 60_000, recall });
    expect(away.take(0, weightOf, 0)).toEqual([]);
    expect(away.take(5, weightOf, 10_000 - RECALL_WORTH_MS + 1)).toHaveLength(1);
  });

  it(`remembers ${MAX_AWAY} at most, the oldest dropped`, () => {
    const away = new SentBack();
    const recall = async () => true;
    for (let i = 0; i <= MAX_AWAY; i++) away.add({ tier: 'batch', deadline: 1e9 + i, returnAt: 1e9, recall });
    expect(away.size).toBe(MAX_AWAY);
  });
});
