/**
 * A run that cannot finish says why. When the virtual clock has nothing left to
 * fire but the lab's own bookkeeping while requests are unanswered (or they are
 * still unanswered long after the trace ended), the lab stops with what was
 * waiting on what: where each unanswered request is (the gate holding it), the
 * LiteTopics holding them with the messages still in each, and the timers left.
 */
import type { Attempt } from './recorder.js';
import type { WaitState } from './wait-split.js';

export type StallKind = 'quiet' | 'gave-up';

/** The run stopped before every request was answered; the message is the diagnosis. */
export class StalledRun extends Error {
  constructor(readonly diagnosis: string) {
    super(diagnosis);
    this.name = 'StalledRun';
  }
}

export interface StallFacts {
  readonly system: string;
  readonly kind: StallKind;
  /** Ms from the start of the run. */
  readonly atMs: number;
  /** Attempts sent and never answered. */
  readonly unanswered: readonly Attempt[];
  /** Resends a client has pending (timers of the lab's clients). */
  readonly resendsPending: number;
  /** Timers left in the system under test, where the clock can tell. */
  readonly pendingTimers?: number;
  /** Messages waiting in a LiteTopic, where the engine can tell. */
  readonly depth?: (liteTopic: string) => number;
  readonly start: number;
  /** The simulated GPU now: slots busy of slots, requests queued inside it. */
  readonly gpu?: { readonly slotsBusy: number; readonly slots: number; readonly queueLength: number };
  /** Where an admitted request with no dispatcher events is (default: in its LiteTopic). */
  readonly admittedGate?: string;
}

const GATE: Readonly<Record<WaitState | 'sent', string>> = {
  sent: 'the edge (no admission answer)',
  'in its LiteTopic, not delivered yet': 'the broker (never delivered)',
  'in the dispatcher, being paced': 'pace (dispatcher)',
  'suspended: pace': 'pace (Suspend)',
  'held in flow control for a GPU slot': 'flow control (waiting for a GPU slot)',
  'suspended: capacity': 'flow control (Suspend, no slot)',
  'suspended: paused': 'paused tenant or account',
  'failed, redelivery pending': 'retry backoff',
  'on the GPU': 'the GPU (call running)',
  answered: 'the reply (answered, client not told)',
};

const MAX_LINES = 20;
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function describeStall(f: StallFacts): string {
  const lines: string[] = [];
  const why =
    f.kind === 'quiet'
      ? 'nothing is left to happen: the clock has no timer but the lab’s own and no request can move'
      : 'they were still unanswered when the lab stopped waiting for them';
  lines.push(`${f.system}: the run stalled at ${s(f.atMs)}: ${f.unanswered.length} request(s) unanswered; ${why}.`);
  if (f.resendsPending) lines.push(`  clients also have ${f.resendsPending} resend(s) pending`);

  const byGate = new Map<string, { n: number; tiers: Map<string, number>; since: number; firstSent: number }>();
  const byTopic = new Map<string, { n: number; gates: Set<string> }>();
  for (const a of f.unanswered) {
    const where = a.wait?.where;
    const gate = where
      ? GATE[where.state]
      : a.admittedAt === undefined
        ? GATE.sent
        : (f.admittedGate ?? GATE['in its LiteTopic, not delivered yet']);
    const g = byGate.get(gate) ?? { n: 0, tiers: new Map<string, number>(), since: Infinity, firstSent: Infinity };
    g.n++;
    g.tiers.set(a.tier, (g.tiers.get(a.tier) ?? 0) + 1);
    g.since = Math.min(g.since, (where?.since ?? a.sentAt) - f.start);
    g.firstSent = Math.min(g.firstSent, a.sentAt - f.start);
    byGate.set(gate, g);
    const topic = a.wait?.liteTopic;
    if (topic !== undefined) {
      const t = byTopic.get(topic) ?? { n: 0, gates: new Set<string>() };
      t.n++;
      t.gates.add(gate);
      byTopic.set(topic, t);
    }
  }
  lines.push('  held by:');
  for (const [gate, g] of [...byGate].sort((a, b) => b[1].n - a[1].n)) {
    const tiers = [...g.tiers].map(([tier, n]) => `${tier} ${n}`).join(', ');
    lines.push(`    ${gate}: ${g.n} (${tiers}); sent from ${s(g.firstSent)}, there (this time) since ${s(g.since)}`);
  }
  if (byTopic.size) {
    lines.push('  LiteTopics holding them:');
    const topics = [...byTopic].sort((a, b) => b[1].n - a[1].n || (a[0] < b[0] ? -1 : 1));
    for (const [topic, t] of topics.slice(0, MAX_LINES)) {
      const depth = f.depth ? `, ${f.depth(topic)} message(s) waiting in the engine` : '';
      lines.push(`    ${topic}: ${t.n} unanswered${depth}; held by ${[...t.gates].join(', ')}`);
    }
    if (topics.length > MAX_LINES) lines.push(`    ... and ${topics.length - MAX_LINES} more`);
  }
  if (f.gpu)
    lines.push(
      `  the GPU meanwhile: ${f.gpu.slotsBusy} of ${f.gpu.slots} slots busy, ${f.gpu.queueLength} queued inside it`,
    );
  if (f.pendingTimers !== undefined) {
    lines.push(`  timers pending besides the lab’s own: ${f.pendingTimers === 0 ? 'none' : f.pendingTimers}`);
  }
  return lines.join('\n');
}

/**
 * After a replay that stalled: on a virtual clock the run stops (`StalledRun`, after
 * `abandon` lets go of parts that would wait forever on a clock nobody advances); on the
 * wall clock the diagnosis is logged and the run reports its unanswered requests.
 */
export function stopOnStall(
  facts: Omit<StallFacts, 'pendingTimers' | 'unanswered' | 'atMs' | 'start'> & {
    readonly timeline: { readonly clock: { now(): number }; readonly start: number; pendingTimers?(): number };
    readonly attempts: readonly Attempt[];
  },
  log: ((line: string) => void) | undefined,
  abandon: () => void = () => {},
): void {
  const { timeline, attempts, ...rest } = facts;
  const diagnosis = describeStall({
    ...rest,
    atMs: timeline.clock.now() - timeline.start,
    start: timeline.start,
    unanswered: attempts.filter((a) => a.status === undefined),
    ...(timeline.pendingTimers ? { pendingTimers: timeline.pendingTimers() } : {}),
  });
  if (timeline.pendingTimers) {
    abandon();
    throw new StalledRun(diagnosis);
  }
  log?.(diagnosis);
}
