import { describe, expect, it } from 'vitest';
import { headlineTable, markdownCell, markdownParams, markdownTable } from '../../../bench/lib/markdown.js';

describe('markdown rendering of lab tables', () => {
  it('keeps a table shaped whatever its cells hold', () => {
    expect(markdownCell('a | b\nc <d> & e')).toBe('a \\| b c &lt;d> &amp; e');
    expect(markdownCell(0.25)).toBe('0.25');
    const md = markdownTable({
      title: 'per tier | x * y',
      columns: ['tier', 'wait p99', 'extra'],
      rows: [
        ['batch', '1 s'],
        ['realtime', 3, 'y', 'beyond'],
      ],
    });
    expect(md.split('\n')).toEqual([
      '**per tier | x \\* y**',
      '',
      '| tier | wait p99 | extra |  |',
      '| --- | --- | --- | --- |',
      '| batch | 1 s |  |  |',
      '| realtime | 3 | y | beyond |',
    ]);
  });

  it('renders a headline in its own order, nulls and booleans as words', () => {
    const t = headlineTable({ sluiceRealtimeSuccess: 1, refusalReduction: null, met: true, note: 'n' });
    expect(t.rows).toEqual([
      ['sluiceRealtimeSuccess', 1],
      ['refusalReduction', 'null'],
      ['met', 'true'],
      ['note', 'n'],
    ]);
  });

  it('folds parameters into a JSON block that a value cannot close early', () => {
    const md = markdownParams({ gpu: { slots: 16 }, note: 'x ``` y' });
    expect(
      md.startsWith('<details><summary>parameters</summary>\n\n```json\n{\n  "gpu": {\n    "slots": 16\n  },'),
    ).toBe(true);
    expect(md.match(/```/g)).toHaveLength(2);
    expect(md.endsWith('```\n\n</details>')).toBe(true);
  });
});
