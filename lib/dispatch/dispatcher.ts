/**
 * The Suspend loop: what a dispatcher does with each delivered message.
 *
 * expired -> answer `expired`, ack. Else pace the LiteTopic (GCRA): a wait of 50 ms
 * or more is a Suspend, so the worker serves other LiteTopics meanwhile; shorter
 * waits are slept here (the broker's Suspend is not finer). Then the request waits,
 * un-acked, in the flow-control layer (flow/scheduler.ts) until the model's shared
 * gate grants it a slot; only past that layer's bound does it Suspend. Then the
 * upstream call; the result (or each
 * stream chunk) goes to the result channel; the slot, the reservoir place and the
 * token charge are settled; ack. Retriable upstream errors become a Failure, which
 * the engine redelivers with backoff; the last attempt answers the client with an
 * error and dead-letters the envelope with its reason.
 */
import { sleep, type Clock } from '../clock/clock.js';
import { decodeEnvelope, type Envelope } from '../envelope.js';
import { resolveLimits } from '../policy/resolve.js';
import type { Policy } from '../policy/schema.js';
import {
  Consume,
  type ConsumeResult,
  type DeadLetter,
  type LiteMessage,
  type MessageHandler,
  type Recall,
  type Worker,
} from '../queue/types.js';
import type { ResultChannel, StoredResult } from '../results/types.js';
import { paceKey, parseReservoirPlace } from '../store/keys.js';
import type { RateStore } from '../store/types.js';
import type { Logger } from '../telemetry/log.js';
import type { UpstreamClient, UpstreamReply } from '../upstream/client.js';
import { openAiError } from '../openai-error.js';
import { retryAfterSeconds } from '../admission/headers.js';
import type { DispatchEvent, ParkCause, SuspendCause } from '../dispatch-events.js';
import type { DeadLetterSink } from './types.js';
import { createCongestion, type Congestion } from './congestion.js';
import { own } from '../lookup.js';
import { effectiveDeadline } from './paused-time.js';
import { createAttempts, persistResult } from './attempts.js';
import { createEmbeddedAttempts, type AttemptStore } from '../store/attempts.js';
import {
  createFlowControl,
  type FlowControl,
  type FlowControlOptions,
  type Shed,
  type ShedAnswered,
} from './flow/scheduler.js';
import { FAIR_SHARE_REASON, fairShareRetryMs, REPORT_EVERY_MS, shedMessage } from '../limits/fair-share.js';
import { createModelCapacity, type SlotSource } from './flow/saturation.js';
import type { Tokens } from './flow/service-time.js';
import { tokensUsed } from './usage.js';

export interface DispatcherOptions {
  /** Deliveries of one envelope before it fails for good. */
  readonly maxAttempts?: number;
  /** The broker's Suspend granularity; shorter waits are slept in the handler. */
  readonly minSuspendMs?: number;
  /** A slot lease outlives a crashed dispatcher by at most this. */
  readonly leaseMs?: number;
  /** How often a paused tenant's or account's queued work looks again. */
  readonly pausedRecheckMs?: number;
  /**
   * An envelope naming a model or account this dispatcher's policy does not have waits this
   * long after its admission (default 2 min: a few policy refreshes) before it fails for good:
   * the edge may have admitted it under a policy version the dispatcher has not loaded yet.
   */
  readonly unknownPolicyGraceMs?: number;
  /** Release slots are booked up to this far ahead (default 30 s); longer waits are re-asked. */
  readonly reserveUpToMs?: number;
  readonly upstreamTimeoutMs?: number;
  /** A result write is retried this long (the upstream call never is); default 5 min. */
  readonly resultWriteGiveUpMs?: number;
  /** The flow-control layer's bounds (requests waiting for a slot, how long each is held). */
  readonly flow?: Omit<FlowControlOptions, 'leaseMs' | 'minSuspendMs'>;
}

export interface DispatcherDeps {
  readonly clock: Clock;
  readonly store: RateStore;
  readonly results: ResultChannel;
  readonly upstream: UpstreamClient;
  readonly policy: () => Policy;
  readonly log: Logger;
  readonly newId: () => string;
  readonly deadLetters?: DeadLetterSink;
  readonly onEvent?: (event: DispatchEvent) => void;
  readonly options?: DispatcherOptions;
  /** Shared congestion state; one per process by default. */
  readonly congestion?: Congestion;
  /** Attempt records and failure counts by request id (lib/dispatch/attempts.ts); in memory by default. */
  readonly attempts?: AttemptStore;
  /** Where paced requests wait for a slot; one per dispatcher by default. */
  readonly flows?: FlowControl;
}

/**
 * A request held for a slot this long is read again before its call: another dispatcher may have
 * shed its place past the fair-share level meanwhile (they report, and shed, once a second).
 */
export const RECHECK_AFTER_HELD_MS = REPORT_EVERY_MS;

const RETRIABLE = new Set([408, 429, 500, 502, 503, 504]);
/** Upstream answers about the request itself: relayed as they are, never retried or dead-lettered. */
const CLIENT_ERRORS = new Set([400, 404, 422]);

/** How an envelope leaves the queue for good, shared by the handler and the dead-letter path. */
function settlement(
  deps: Pick<DispatcherDeps, 'clock' | 'store' | 'results' | 'deadLetters' | 'onEvent' | 'log' | 'options'>,
) {
  const { clock, store, results } = deps;
  /** Answer the client and give back what the request held: its reservoir place and unused tokens. */
  async function finish(
    envelope: Envelope,
    result: Omit<StoredResult, 'id' | 'tenant' | 'completedAt'>,
    usedTokens?: number,
  ) {
    const answer = { ...result, id: envelope.id, tenant: envelope.tenant, completedAt: clock.now() };
    await persistResult({ clock, log: deps.log, giveUpMs: deps.options?.resultWriteGiveUpMs }, envelope.id, () =>
      results.complete(answer, envelope.enqueuedAt),
    );
    if (envelope.reservoirKey) await store.leaveReservoir(envelope.reservoirKey);
    if (usedTokens !== undefined && envelope.charged.length > 0) {
      const delta = usedTokens - envelope.tokenEstimate;
      if (delta !== 0) await store.reconcile(envelope.charged.map((c) => ({ ...c, delta })));
    }
  }

  async function failForGood(envelope: Envelope, status: number, reason: string, body?: unknown) {
    deps.onEvent?.({ type: 'failed', envelope, status, reason });
    await finish(envelope, {
      status: 'failed',
      httpStatus: status,
      body:
        body ??
        openAiError(`The model endpoint could not serve this request: ${reason}`, 'upstream_error', 'upstream_failed'),
    });
    await deps.deadLetters?.put(envelope, reason);
  }
  return { finish, failForGood };
}

/**
 * For messages the engine dead-lettered itself (the handler crashed or hung on
 * every attempt): the client still gets an answer, and the reservoir place is
 * given back, so nothing waits forever on a message no one will serve.
 */
export async function settleDeadLetter(
  deps: Pick<DispatcherDeps, 'clock' | 'store' | 'results' | 'deadLetters' | 'onEvent' | 'log' | 'options'>,
  deadLetter: DeadLetter,
): Promise<void> {
  let envelope: Envelope;
  try {
    envelope = decodeEnvelope(deadLetter.message.body);
  } catch {
    deps.log.error(
      { messageId: deadLetter.message.messageId, reason: deadLetter.reason },
      'undecodable dead letter dropped',
    );
    return;
  }
  const { httpStatus, reason } = deadLetter;
  const body = httpStatus
    ? openAiError(`This request was not served: ${reason}.`, 'server_error', 'queue_unavailable')
    : undefined;
  await settlement(deps).failForGood(
    envelope,
    httpStatus ?? 500,
    httpStatus ? reason : `dispatch failed on every attempt: ${reason}`,
    body,
  );
}

/**
 * What this dispatcher remembers of messages it sent back, by message id: the
 * release slot it booked for them, or when and why it parked them. In memory: a
 * message redelivered to another dispatcher just books again, which only ever
 * slows its LiteTopic, never lets it run faster than its pace.
 */
function createMessageBook<V>(clock: Clock, keepMs: number, timeOf: (v: V) => number) {
  const book = new Map<string, V>();
  let holds = 0;
  return {
    hold(messageId: string, value: V): void {
      book.set(messageId, value);
      // Entries of messages that never came back (expired, served elsewhere) age out.
      if (++holds % 1024 === 0) {
        const stale = clock.now() - keepMs;
        for (const [id, v] of book) if (timeOf(v) < stale) book.delete(id);
      }
    },
    take(messageId: string): V | undefined {
      const value = book.get(messageId);
      book.delete(messageId);
      return value;
    },
  };
}

/** Slots read from the model servers' metrics where the policy asks; a failing read is logged once a minute per model. */
function modelSlots(deps: Pick<DispatcherDeps, 'clock' | 'upstream' | 'log' | 'onEvent'>): SlotSource {
  const warnedAt = new Map<string, number>();
  return createModelCapacity({
    clock: deps.clock,
    scrape: (baseUrl, timeoutMs) => deps.upstream.metrics(baseUrl, timeoutMs),
    onChange(model, slots, reason) {
      deps.log.info({ model, slots, reason }, "model slots set from its servers' metrics");
      deps.onEvent?.({ type: 'capacity', model, slots, reason });
    },
    onError(model, error) {
      const now = deps.clock.now();
      if (now - (warnedAt.get(model) ?? -Infinity) < 60_000) return;
      warnedAt.set(model, now);
      deps.log.warn(
        { model, err: String(error) },
        "model servers' metrics unreadable; slots held at most at the declared ones",
      );
    },
  });
}

export function createDispatcher(deps: DispatcherDeps): MessageHandler {
  const { clock, store, results, upstream, log } = deps;
  const maxAttempts = deps.options?.maxAttempts ?? 3;
  const minSuspendMs = deps.options?.minSuspendMs ?? 50;
  const leaseMs = deps.options?.leaseMs ?? 5 * 60_000;
  const upstreamTimeoutMs = deps.options?.upstreamTimeoutMs ?? 120_000;
  const pausedRecheckMs = deps.options?.pausedRecheckMs ?? 1_000;
  const unknownPolicyGraceMs = deps.options?.unknownPolicyGraceMs ?? 120_000;
  const emit = deps.onEvent ?? (() => {});
  const congestion =
    deps.congestion ??
    createCongestion({ clock, onChange: (model, factor) => emit({ type: 'congestion', model, factor }) });
  const roundRobin = new Map<string, number>();
  const reserveUpToMs = deps.options?.reserveUpToMs ?? 30_000;
  const releases = createMessageBook<number>(clock, 2 * reserveUpToMs + 60_000, (at) => at);
  // When and why each message went back: the next delivery's wait is charged to that cause.
  const parked = createMessageBook<{ at: number; cause: ParkCause }>(clock, 10 * 60_000, (p) => p.at);
  function park(messageId: string, cause: ParkCause, result: ConsumeResult): ConsumeResult {
    parked.hold(messageId, { at: clock.now(), cause });
    return result;
  }
  function suspend(
    message: LiteMessage,
    envelope: Envelope,
    pauseMs: number,
    cause: SuspendCause,
    heldMs?: number,
    onRecallable?: (recall: Recall) => void,
  ): ConsumeResult {
    // Whole ms, as the broker's Suspend takes them: the trace and metrics show what was asked.
    const ms = Math.ceil(pauseMs);
    emit({ type: 'suspended', envelope, ms, cause, ...(heldMs !== undefined ? { heldMs } : {}) });
    return park(message.messageId, cause, Consume.suspend(ms, onRecallable));
  }
  const flows =
    deps.flows ??
    createFlowControl({
      clock,
      store,
      policy: deps.policy,
      newId: deps.newId,
      slots: modelSlots(deps),
      options: { ...deps.options?.flow, leaseMs, minSuspendMs },
      onShed: answerShed,
    });

  /**
   * Requests shed from their LiteTopic because their flow's fair share cannot start them in time
   * (flow/scheduler.ts), answered as the edge refuses a newcomer past the level, each with the
   * rounds until its place would come. A write that fails leaves that request to be judged when
   * it surfaces, as before.
   */
  async function answerShed({ model, tier, tenant, reservoir, ids, ahead, share }: Shed): Promise<ShedAnswered> {
    log.info(
      { model, tier, tenant, reservoir, shed: ids.length, kept: ahead },
      'answered waiting requests their fair share cannot start before their deadline',
    );
    const written = await Promise.all(
      ids.map(async (id, i) => {
        // One round per place ahead past the level: shed together, they are told apart.
        const retryAfterMs = fairShareRetryMs(Math.max(share.cap, ahead) + i, share);
        const answer: StoredResult = {
          id,
          tenant,
          status: 'expired',
          httpStatus: 429,
          body: openAiError(shedMessage(ahead + i, share, retryAfterMs), 'rate_limit_exceeded', FAIR_SHARE_REASON),
          completedAt: clock.now(),
          refusal: { reason: FAIR_SHARE_REASON, retryAfterMs },
        };
        try {
          await results.complete(answer);
          return id;
        } catch (error) {
          log.warn({ id, err: String(error) }, 'could not answer a request shed past its fair share');
          return undefined;
        }
      }),
    );
    return written.filter((id) => id !== undefined);
  }

  function pickUpstream(model: string, upstreams: readonly string[]): string {
    const n = roundRobin.get(model) ?? 0;
    roundRobin.set(model, n + 1);
    return upstreams[n % upstreams.length]!;
  }

  const { finish, failForGood } = settlement(deps);
  // The claim outlives any call (the client aborts at the timeout). A result write retried past it
  // is safe: while the store refuses the write it refuses other claims too.
  const attempts = createAttempts(
    { clock, store: deps.attempts ?? createEmbeddedAttempts(clock), results, newId: deps.newId, log },
    { leaseMs: upstreamTimeoutMs + 10_000, writeGiveUpMs: deps.options?.resultWriteGiveUpMs },
  );

  /**
   * A request whose answer is already written ends with no call: its reservoir place given back
   * and its message acked. One shed past the fair-share level (in the broker or in the room)
   * ends as a request answered late does.
   */
  async function endAnswered(envelope: Envelope, refusal: string | undefined): Promise<ConsumeResult> {
    if (envelope.reservoirKey) await store.leaveReservoir(envelope.reservoirKey);
    if (refusal === FAIR_SHARE_REASON) {
      emit({ type: 'expired', envelope });
      await deps.deadLetters?.put(envelope, 'past the fair-share level');
    }
    return Consume.success;
  }

  async function expire(envelope: Envelope): Promise<ConsumeResult> {
    emit({ type: 'expired', envelope });
    await finish(envelope, {
      status: 'expired',
      httpStatus: 504,
      body: openAiError(
        'The request waited in the queue longer than its tier allows and was not served.',
        'timeout',
        'queue_wait_exceeded',
      ),
    });
    await deps.deadLetters?.put(envelope, 'expired in queue');
    return Consume.success;
  }

  return async function dispatch(message: LiteMessage, worker?: Worker): Promise<ConsumeResult> {
    let envelope: Envelope;
    try {
      envelope = decodeEnvelope(message.body);
    } catch (error) {
      // Nothing can answer a message we cannot read; keep it out of the way.
      log.error(
        { messageId: message.messageId, liteTopic: message.liteTopic, err: String(error) },
        'undecodable envelope dropped',
      );
      return Consume.success;
    }

    const away = parked.take(message.messageId);
    emit({
      type: 'delivered',
      envelope,
      attempt: message.attempt,
      first: away === undefined && message.attempt === 1,
      sinceEnqueueMs: clock.now() - envelope.enqueuedAt,
      ...(away ? { parkedMs: clock.now() - away.at, parkedBy: away.cause } : {}),
    });

    const before = await attempts.before(envelope);
    if (before?.kind === 'answered') return endAnswered(envelope, before.refusal);
    if (before) {
      log.warn({ id: envelope.id, err: String(before.error) }, 'result store unavailable; message waits');
      return park(message.messageId, 'other', Consume.suspend(Math.max(minSuspendMs, pausedRecheckMs)));
    }

    if (clock.now() >= effectiveDeadline(envelope, deps.policy(), clock.now())) return expire(envelope);

    const policy = deps.policy();
    const model = own(policy.models, envelope.model);
    const account = own(policy.accounts, envelope.account);
    if (!model || !account) {
      if (clock.now() - envelope.enqueuedAt < unknownPolicyGraceMs) {
        return park(message.messageId, 'other', Consume.suspend(Math.max(minSuspendMs, pausedRecheckMs)));
      }
      await failForGood(
        envelope,
        404,
        `model ${envelope.model} or account ${envelope.account} no longer in the policy`,
      );
      return Consume.success;
    }

    // Paused work stays queued, and keeps its place, until an operator resumes it.
    if (account.paused || own(policy.tenants, envelope.tenant)?.paused) {
      return suspend(message, envelope, pausedRecheckMs, 'paused');
    }

    const limits = resolveLimits(policy, account, envelope.model).accountModel;
    const rate = limits.rate * envelope.paceFactor * congestion.factor(envelope.model);
    // A message that already holds a release slot (booked earlier, or released and then
    // stopped at the capacity gate) does not pay for another one.
    const booked = releases.take(message.messageId);
    if (booked !== undefined && booked > clock.now()) {
      const ms = booked - clock.now();
      if (ms >= minSuspendMs) {
        releases.hold(message.messageId, booked);
        return suspend(message, envelope, ms, 'pace');
      }
      await sleep(clock, ms);
    } else if (booked === undefined) {
      const pace = { key: paceKey(envelope.tenant, envelope.liteTopic), rate, burst: limits.burst, reserveUpToMs };
      for (;;) {
        const { waitMs, reserved } = await store.paceReserving(pace);
        if (waitMs === 0) break;
        // A booked release a little ahead is held here when there is room: no redelivery for it.
        const held = reserved && waitMs >= minSuspendMs ? flows.holdForPace(waitMs) : undefined;
        if (held) {
          await held;
          break;
        }
        if (waitMs >= minSuspendMs) {
          if (reserved) releases.hold(message.messageId, clock.now() + waitMs);
          return suspend(message, envelope, waitMs, 'pace');
        }
        await sleep(clock, waitMs);
        if (reserved) break;
      }
    }

    const askedAt = clock.now();
    const place = envelope.reservoirKey === undefined ? undefined : parseReservoirPlace(envelope.reservoirKey);
    emit({ type: 'awaiting-slot', envelope });
    const verdict = await flows.ask({
      flow: { tier: envelope.tier, tenant: envelope.tenant, account: envelope.account },
      model: envelope.model,
      deadline: effectiveDeadline(envelope, policy, clock.now()),
      estimate: envelope.tokenEstimate,
      promptEstimate: envelope.promptEstimate ?? 0,
      liteTopic: message.liteTopic,
      reservoir: place?.key,
      place: place?.member,
    });
    if (verdict.kind === 'expired') return expire(envelope);
    if (verdict.kind === 'late') {
      // Answered now rather than after the tier's whole maximum wait.
      emit({ type: 'expired', envelope });
      const reason = 'capacity_deadline';
      await finish(envelope, {
        status: 'expired',
        httpStatus: 429,
        body: openAiError(
          `The model is busy with work that will not end before this request's deadline; retry in ${retryAfterSeconds(verdict.retryAfterMs)} s.`,
          'rate_limit_exceeded',
          reason,
        ),
        // The edge answers it with Retry-After and x-sluice-reason, as an admission refusal.
        refusal: { reason, retryAfterMs: verdict.retryAfterMs },
      });
      await deps.deadLetters?.put(envelope, 'cannot start before its deadline');
      return Consume.success;
    }
    if (verdict.kind === 'suspend') {
      releases.hold(message.messageId, clock.now());
      return suspend(message, envelope, verdict.ms, 'capacity', clock.now() - askedAt, verdict.onRecallable);
    }
    if (verdict.kind === 'shed') return endAnswered(envelope, FAIR_SHARE_REASON);
    const slot = verdict.grant;
    // Held a while, it may have been shed meanwhile by another dispatcher, whose room did not hold it.
    if (clock.now() - askedAt >= RECHECK_AFTER_HELD_MS) {
      const meanwhile = await attempts.before(envelope);
      if (meanwhile?.kind === 'answered') {
        await slot.cancel();
        return endAnswered(envelope, meanwhile.refusal);
      }
    }
    // Past its share of the workers the call gives its worker back: it is bounded by the model's slots.
    if (slot.freesWorker) worker?.release();

    let claimed;
    try {
      claimed = await attempts.claim(envelope);
    } catch (error) {
      await slot.release(undefined);
      log.warn({ id: envelope.id, err: String(error) }, 'attempt record unavailable; message waits');
      return park(message.messageId, 'other', Consume.suspend(Math.max(minSuspendMs, pausedRecheckMs)));
    }
    if (claimed.claim.state !== 'granted') {
      await slot.release(undefined);
      if (claimed.claim.state === 'busy') {
        return park(
          message.messageId,
          'other',
          Consume.suspend(Math.max(minSuspendMs, Math.min(claimed.claim.retryAfterMs, pausedRecheckMs))),
        );
      }
      // Its call may have reached the GPU: answered with an error rather than run a second time.
      await failForGood(envelope, 502, 'the dispatcher serving it stopped mid-call');
      return Consume.success;
    }

    emit({
      type: 'started',
      envelope,
      queueWaitMs: clock.now() - envelope.enqueuedAt,
      slotWaitMs: clock.now() - askedAt,
    });
    const call = {
      baseUrl: pickUpstream(envelope.model, model.upstreams),
      operation: envelope.operation,
      body: { ...envelope.body, model: model.upstreamModel ?? envelope.model },
      timeoutMs: upstreamTimeoutMs,
    };
    const startedAt = clock.now();
    let reply: UpstreamReply | undefined;
    let usage: Tokens | undefined;
    let streamed = 0;
    let firstChunkAt: number | undefined; // the first chunk with generated text
    let callEndedAt: number | undefined;
    try {
      reply =
        envelope.mode === 'stream'
          ? await upstream.stream(call, async (data) => {
              streamed++;
              const json = safeJson(data);
              if (firstChunkAt === undefined && carriesText(json)) firstChunkAt = clock.now();
              usage = tokensUsed(json) ?? usage;
              await results.appendChunk(envelope.id, data);
            })
          : await upstream.call(call);
      callEndedAt = clock.now();
    } catch (error) {
      reply = { status: 503, json: undefined };
      log.warn({ id: envelope.id, upstream: call.baseUrl, err: String(error) }, 'upstream call failed');
    } finally {
      usage ??= tokensUsed(reply?.json);
      await slot.release(usage);
    }
    congestion.observe(envelope.model, {
      status: reply.status,
      latencyMs: clock.now() - startedAt,
      latencyTargetMs: model.latencyTargetMs,
    });
    const upstreamTimes = {
      upstreamMs: (callEndedAt ?? clock.now()) - startedAt,
      ...(firstChunkAt !== undefined ? { firstTokenMs: firstChunkAt - startedAt } : {}),
    };

    if (reply.status >= 200 && reply.status < 300) {
      const used = usage && usage.prompt + usage.output;
      await finish(envelope, { status: 'completed', httpStatus: reply.status, body: reply.json ?? null }, used);
      emit({
        type: 'completed',
        envelope,
        status: reply.status,
        totalMs: clock.now() - envelope.enqueuedAt,
        ...upstreamTimes,
      });
      return Consume.success;
    }
    if (CLIENT_ERRORS.has(reply.status) && reply.json !== undefined) {
      // The request's own fault, not Sluice's: answer as the upstream did; it used no tokens.
      await finish(envelope, { status: 'failed', httpStatus: reply.status, body: reply.json }, 0);
      emit({
        type: 'completed',
        envelope,
        status: reply.status,
        totalMs: clock.now() - envelope.enqueuedAt,
        ...upstreamTimes,
      });
      return Consume.success;
    }
    const reason = `upstream answered ${reply.status}`;
    const failures = await attempts.failed(envelope, claimed.owner);
    // A stream that already sent chunks cannot be replayed to its client.
    if (RETRIABLE.has(reply.status) && streamed === 0 && failures < maxAttempts) {
      emit({ type: 'retrying', envelope, attempt: failures, reason });
      return park(message.messageId, 'retry', Consume.failure(reason));
    }
    await failForGood(
      envelope,
      RETRIABLE.has(reply.status) ? 502 : reply.status,
      reason,
      RETRIABLE.has(reply.status) ? undefined : reply.json,
    );
    return Consume.success;
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A stream chunk with generated text: the opening chunk (role only) and usage chunks are not the first token. */
function carriesText(json: unknown): boolean {
  type Chunk = { choices?: { delta?: { content?: unknown }; text?: unknown }[]; type?: unknown; delta?: unknown };
  const j = json as Chunk | undefined;
  const choice = Array.isArray(j?.choices) ? j.choices[0] : undefined;
  const text =
    choice?.delta?.content ?? choice?.text ?? (j?.type === 'response.output_text.delta' ? j.delta : undefined);
  return typeof text === 'string' && text.length > 0;
}
