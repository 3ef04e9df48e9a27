/** Reading one request's trace back: its steps from every instance, in time order. */
import type { AggregateOps } from '../../store/aggregate.js';
import type { TraceStep } from './events.js';
import { traceKey } from './keys.js';

/** Request ids are ours (UUID-like); anything longer is not one, and is not looked up. */
export const MAX_TRACE_ID_LENGTH = 128;

export async function readTrace(store: Pick<AggregateOps, 'readLog'>, id: string): Promise<TraceStep[] | undefined> {
  if (id.length === 0 || id.length > MAX_TRACE_ID_LENGTH) return undefined;
  const steps: TraceStep[] = [];
  for (const line of await store.readLog(traceKey(id))) {
    try {
      const step = JSON.parse(line) as TraceStep;
      if (step && typeof step === 'object' && typeof step.at === 'number' && typeof step.step === 'string') steps.push(step);
    } catch {
      // A damaged entry is left out; the rest of the timeline still reads.
    }
  }
  // Several instances flush at their own times: order by when each step happened.
  return steps.length === 0 ? undefined : steps.sort((a, b) => a.at - b.at);
}
