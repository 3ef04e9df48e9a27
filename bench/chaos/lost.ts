/**
 * Where the chaos bench's lost requests are when it gives up on them: accepted, but no
 * final result by the settle deadline. Each one is placed from what can be seen from
 * outside the processes: its result record, the spillover queue's counts and the process
 * logs that name its id (the edge logs each spill, a dispatcher each redrive and each
 * answer it gives up on), so a future loss explains itself.
 */
import { readFileSync } from 'node:fs';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Redis } from 'ioredis';
import { resultKey } from '../../lib/store/keys.js';

export interface LostRequest {
  readonly id: string;
  /** The stored status at the settle deadline, or `none`. */
  readonly result: string;
  /** Log lines naming the id, as `process: msg`, in log order. */
  readonly mentions: readonly string[];
  readonly place: string;
}

export interface LostReport {
  readonly requests: readonly LostRequest[];
  /** Lost requests by place. */
  readonly byPlace: Readonly<Record<string, number>>;
  /** The spillover queue at the settle deadline. */
  readonly spillover: { readonly visible: number; readonly inFlight: number; readonly delayed: number };
  readonly lines: readonly string[];
}

const SPILLED = 'envelope spilled to SQS';
const REDRIVEN = 'redriven from the spillover into the broker';

/** Where one lost request is, from its record and the log lines that name it. */
export function placeOf(result: string, mentions: readonly string[]): string {
  if (result !== 'none' && result !== 'queued') return `answered after the settle deadline (${result})`;
  const spilled = mentions.some((m) => m.endsWith(`: ${SPILLED}`));
  const redriven = mentions.some((m) => m.endsWith(`: ${REDRIVEN}`));
  const dispatcher = mentions.filter((m) => !m.startsWith('edge:') && !m.endsWith(`: ${REDRIVEN}`));
  if (dispatcher.length > 0) return `delivered to a dispatcher, unanswered (last: ${dispatcher.at(-1)})`;
  if (spilled && !redriven) return 'still in the SQS spillover (spilled, never redriven)';
  if (redriven) return 'redriven into the broker, never delivered';
  return 'sent to the broker by the edge, never delivered';
}

function mentionsById(logs: Readonly<Record<string, string>>, ids: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [name, path] of Object.entries(logs)) {
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n')) {
      if (!line.startsWith('{') || !line.includes('"id":"')) continue;
      let entry: { id?: unknown; msg?: unknown; time?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue;
      }
      if (typeof entry.id !== 'string' || !ids.has(entry.id)) continue;
      const list = out.get(entry.id) ?? [];
      list.push(`${name}: ${String(entry.msg)}`);
      out.set(entry.id, list);
    }
  }
  return out;
}

export async function whereLost(opts: {
  readonly ids: readonly string[];
  readonly redis: Redis;
  readonly sqs: SQSClient;
  readonly spilloverUrl: string;
  /** Process name → log file. */
  readonly logs: Readonly<Record<string, string>>;
}): Promise<LostReport> {
  const attrs = await opts.sqs
    .send(
      new GetQueueAttributesCommand({
        QueueUrl: opts.spilloverUrl,
        AttributeNames: [
          'ApproximateNumberOfMessages',
          'ApproximateNumberOfMessagesNotVisible',
          'ApproximateNumberOfMessagesDelayed',
        ],
      }),
    )
    .catch(() => ({ Attributes: {} as Record<string, string> }));
  const a = attrs.Attributes ?? {};
  const spillover = {
    visible: Number(a.ApproximateNumberOfMessages ?? NaN),
    inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? NaN),
    delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? NaN),
  };
  const mentions = mentionsById(opts.logs, new Set(opts.ids));
  const requests: LostRequest[] = [];
  for (const id of opts.ids) {
    const raw = await opts.redis.get(resultKey(id)).catch(() => null);
    const result = raw ? String((JSON.parse(raw) as { status?: unknown }).status) : 'none';
    const m = mentions.get(id) ?? [];
    requests.push({ id, result, mentions: m, place: placeOf(result, m) });
  }
  const byPlace: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const r of requests) byPlace[r.place] = (byPlace[r.place] ?? 0) + 1;
  const lines = [
    `lost ${requests.length}; spillover at the settle deadline: visible ${spillover.visible}, in flight ${spillover.inFlight}, delayed ${spillover.delayed}`,
    ...Object.entries(byPlace).map(([place, n]) => `  ${n}: ${place}`),
    ...requests.map((r) => `  ${r.id}: result ${r.result}; ${r.mentions.join(' → ') || 'no log line names it'}`),
  ];
  return { requests, byPlace: { ...byPlace }, spillover, lines };
}
