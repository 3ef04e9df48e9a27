import { describe, expect, it } from 'vitest';
import { RecentWarnings } from '../../../lib/telemetry/recent-warnings.js';

const warning = (at: number, account: string, model = 'm') => ({
  at,
  tier: 'realtime',
  tenant: 't',
  account,
  model,
  message: `near limit at ${at}`,
});

describe('recent warnings', () => {
  it('keeps one line per account and model, the latest first, counting what was folded into it', () => {
    const w = new RecentWarnings();
    w.add(warning(1, 'a'));
    w.add(warning(2, 'b'));
    w.add(warning(3, 'a'));
    w.add(warning(4, 'a', 'other-model'));
    expect(w.latest(10).map((l) => [l.account, l.model, l.at, l.count])).toEqual([
      ['a', 'other-model', 4, 1],
      ['a', 'm', 3, 2],
      ['b', 'm', 2, 1],
    ]);
    expect(w.latest(1)).toHaveLength(1);
  });

  it('keeps at most its bound of lines, dropping the oldest', () => {
    const w = new RecentWarnings(2);
    for (const account of ['a', 'b', 'c']) w.add(warning(0, account));
    expect(w.latest(10).map((l) => l.account)).toEqual(['c', 'b']);
  });
});
