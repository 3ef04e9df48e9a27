/**
 * The plain events the aggregate takes, so it imports nothing from the edge or
 * the dispatcher: an admission decision and one step of a delivery.
 */
export interface FlowAdmission {
  readonly outcome: 'admitted' | 'rejected';
  readonly id: string;
  readonly account: string;
  readonly tenant: string;
  readonly tier: string;
  readonly model: string;
  readonly reason?: string;
  readonly warning?: string;
  /** For admissions: the LiteTopic the request waits in. */
  readonly liteTopic?: string;
  /** The windows checked, as the edge reported them (traces show them). */
  readonly windows?: readonly {
    readonly scope: string;
    readonly unit: string;
    readonly limit: number;
    readonly remaining: number;
  }[];
}

export interface FlowEnvelope {
  readonly id: string;
  readonly tier: string;
  readonly tenant: string;
  readonly model: string;
  readonly liteTopic: string;
  readonly account?: string;
}

export type FlowDispatch =
  | {
      readonly type: 'delivered';
      readonly envelope: FlowEnvelope;
      readonly attempt: number;
      readonly first: boolean;
      readonly sinceEnqueueMs: number;
    }
  | { readonly type: 'awaiting-slot'; readonly envelope: FlowEnvelope }
  | { readonly type: 'suspended'; readonly envelope: FlowEnvelope; readonly ms: number; readonly cause: string }
  | {
      readonly type: 'started';
      readonly envelope: FlowEnvelope;
      readonly queueWaitMs: number;
      readonly slotWaitMs?: number;
    }
  | { readonly type: 'completed'; readonly envelope: FlowEnvelope; readonly status: number; readonly totalMs: number }
  | { readonly type: 'retrying'; readonly envelope: FlowEnvelope; readonly attempt: number; readonly reason: string }
  | { readonly type: 'failed'; readonly envelope: FlowEnvelope; readonly status: number; readonly reason: string }
  | { readonly type: 'expired'; readonly envelope: FlowEnvelope };

/** One step of a request's timeline, as kept in its trace. */
export interface TraceStep {
  readonly at: number;
  /** Which process wrote it. */
  readonly by: string;
  readonly step: string;
  readonly [detail: string]: unknown;
}
