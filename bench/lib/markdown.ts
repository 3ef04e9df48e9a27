/**
 * Markdown renderers for the lab's output, beside the plain-text one in tables.ts.
 * They know the shape of a Table and of a headline, never a scenario's fields, so
 * a table or figure a scenario adds shows up without a change here.
 */
import type { Table } from '../scenarios/types.js';

type Cell = string | number | boolean | null;

/** One cell as Markdown table text: whatever the string holds, the table keeps its shape. */
export function markdownCell(value: Cell): string {
  return String(value).replace(/\r?\n/g, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\|/g, '\\|').trim();
}

/** Inline text (a title, a description): no HTML, no emphasis it did not ask for, one line. */
export function markdownText(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\*/g, '\\*').trim();
}

/** A table as GitHub Markdown, its title as a bold line above; short rows are padded. */
export function markdownTable(t: Table): string {
  const width = Math.max(1, t.columns.length, ...t.rows.map((r) => r.length));
  const line = (cells: readonly Cell[]) => {
    const padded = Array.from({ length: width }, (_, i) => (i < cells.length ? markdownCell(cells[i]!) : ''));
    return `| ${padded.join(' | ')} |`;
  };
  return [`**${markdownText(t.title)}**`, '', line(t.columns), `|${' --- |'.repeat(width)}`, ...t.rows.map(line)].join(
    '\n',
  );
}

/** A headline (the figures a scenario exists to show) as a two-column table, in the scenario's own order. */
export function headlineTable(headline: Readonly<Record<string, Cell>>): Table {
  return {
    title: 'headline',
    columns: ['figure', 'value'],
    rows: Object.entries(headline).map(([k, v]) => [k, typeof v === 'number' ? v : String(v)]),
  };
}

/** Parameters as a folded JSON block: they nest, and they are for the reader who checks the figures. */
export function markdownParams(params: Readonly<Record<string, unknown>>): string {
  const json = JSON.stringify(params, null, 2).replace(/```/g, '`\u200b``');
  return ['<details><summary>parameters</summary>', '', '```json', json, '```', '', '</details>'].join('\n');
}
