/**
 * Where a request's wait went, as stages of the `wait` histogram: from enqueue to
 * the broker's first delivery (`broker`), away in its LiteTopic after a Suspend,
 * by cause (`suspend_pace`, `suspend_capacity`, `suspend_paused`; a failure's
 * backoff is `retry`, a store outage `suspend_other`), held in flow control for a
 * GPU slot (`slot`), the GPU call (`upstream`) and a stream's first token
 * (`first_token`, part of `upstream`, not added to it).
 *
 * Each observation is one interval, not a request's sum: a Suspend is observed
 * when the message comes back, so the sums by stage split the total wait.
 */
import type { DispatchEvent } from '../dispatch-events.js';

export const WAIT_STAGES = [
  'broker',
  'suspend_pace',
  'suspend_capacity',
  'suspend_paused',
  'suspend_other',
  'retry',
  'slot',
  'upstream',
  'first_token',
] as const;
export type WaitStage = (typeof WAIT_STAGES)[number];

export interface StageTime {
  readonly stage: WaitStage;
  readonly ms: number;
}

const PARKED: Readonly<Record<string, WaitStage>> = {
  pace: 'suspend_pace',
  capacity: 'suspend_capacity',
  paused: 'suspend_paused',
  retry: 'retry',
  other: 'suspend_other',
};

export function waitStages(event: DispatchEvent): StageTime[] {
  switch (event.type) {
    case 'delivered': {
      if (event.first) return [{ stage: 'broker', ms: event.sinceEnqueueMs }];
      const stage =
        event.parkedBy !== undefined && Object.hasOwn(PARKED, event.parkedBy) ? PARKED[event.parkedBy]! : undefined;
      return stage && event.parkedMs !== undefined ? [{ stage, ms: event.parkedMs }] : [];
    }
    case 'suspended':
      return event.heldMs !== undefined ? [{ stage: 'slot', ms: event.heldMs }] : [];
    case 'started':
      return event.slotWaitMs !== undefined ? [{ stage: 'slot', ms: event.slotWaitMs }] : [];
    case 'completed': {
      const out: StageTime[] = [];
      if (event.upstreamMs !== undefined) out.push({ stage: 'upstream', ms: event.upstreamMs });
      if (event.firstTokenMs !== undefined) out.push({ stage: 'first_token', ms: event.firstTokenMs });
      return out;
    }
    default:
      return [];
  }
}
