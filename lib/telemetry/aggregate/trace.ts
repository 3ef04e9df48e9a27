/** Reading one request's trace back: its steps from every instance and trace bucket, in time order. */
import type { AggregateOps } from '../../store/aggregate.js';
import type { TraceStep } from './events.js';
import { fields, traceKey } from './keys.js';
import { AGGREGATE, TRACE_BUCKETS_LIVE } from './layout.js';

/** Request ids are ours (UUID-like); anything longer is not one, and is not looked up. */
export const MAX_TRACE_ID_LENGTH = 128;

/** The bucket a flush at `now` writes its trace steps to. */
export function traceBucket(now: number): number {
  return Math.floor(now / AGGREGATE.traceBucketMs) * AGGREGATE.traceBucketMs;
}

/** The buckets a read at `now` looks in: those kept, and the next one for a writer whose clock runs ahead. */
function traceBuckets(now: number): string[] {
  const next = traceBucket(now) + AGGREGATE.traceBucketMs;
  return Array.from({ length: TRACE_BUCKETS_LIVE + 1 }, (_, i) => traceKey(next - i * AGGREGATE.traceBucketMs));
}

export async function readTrace(
  store: Pick<AggregateOps, 'readLines'>,
  id: string,
  now: number,
): Promise<TraceStep[] | undefined> {
  if (id.length === 0 || id.length > MAX_TRACE_ID_LENGTH) return undefined;
  const steps: TraceStep[] = [];
  for (const line of (await store.readLines(traceBuckets(now), fields.trace(id))).flat()) {
    try {
      const step = JSON.parse(line) as TraceStep;
      if (step && typeof step === 'object' && typeof step.at === 'number' && typeof step.step === 'string')
        steps.push(step);
    } catch {
      // A damaged entry is left out; the rest of the timeline still reads.
    }
  }
  // Several instances flush at their own times: order by when each step happened.
  return steps.length === 0 ? undefined : steps.sort((a, b) => a.at - b.at);
}
