/**
 * POST /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses: validate,
 * admit, enqueue to the LiteTopic, then answer sync, streaming or async.
 */
import { Hono, type Context } from 'hono';
import { stream, streamSSE } from 'hono/streaming';
import {
  encodeEnvelope,
  MAX_ENVELOPE_BODY_DEPTH,
  type Envelope,
  type Operation,
  type ReplyMode,
} from '../../../lib/envelope.js';
import { admit } from '../../../lib/admission/admit.js';
import { createFairShareView } from '../../../lib/admission/fair-share-view.js';
import { rateLimitHeaders, retryAfterSeconds } from '../../../lib/admission/headers.js';
import { own } from '../../../lib/lookup.js';
import type { StoredResult } from '../../../lib/results/types.js';
import type { EdgeDeps } from '../deps.js';
import { ApiError, modelNotFound } from '../errors.js';
import type { AuthEnv } from '../middleware/auth.js';
import { DEFAULT_MAX_BODY_DEPTH, limitBody, readJsonBody, requireJson } from '../middleware/json-body.js';
import type { RequestIdEnv } from '../middleware/request-id.js';
import { estimateTokenParts } from '../estimate.js';
import { checkPublicBaseUrl, requestStatusUrl } from '../public-url.js';
import { JSON_KEEPALIVE, SSE_KEEPALIVE, awaitKeepingAlive, within } from '../keepalive.js';
import { endsWithDone, streamRelay } from '../relay.js';
import { bodies, crossFieldIssue } from '../schemas.js';

type Env = { Variables: AuthEnv['Variables'] & RequestIdEnv['Variables'] };

const ROUTES: Array<[string, Operation]> = [
  ['/chat/completions', 'chat.completions'],
  ['/completions', 'completions'],
  ['/embeddings', 'embeddings'],
  ['/responses', 'responses'],
];

export function inferenceRoutes(deps: EdgeDeps): Hono<Env> {
  const app = new Hono<Env>();
  const upstreamTimeoutMs = deps.options?.upstreamTimeoutMs ?? 120_000;
  const keepaliveMs = deps.options?.keepaliveMs ?? 15_000;
  const maxSyncWaitMs = deps.options?.maxSyncWaitMs ?? Number.POSITIVE_INFINITY;
  const maxBodyDepth = Math.min(deps.options?.maxBodyDepth ?? DEFAULT_MAX_BODY_DEPTH, MAX_ENVELOPE_BODY_DEPTH);
  checkPublicBaseUrl(deps.options?.publicBaseUrl);
  const statusUrl = (id: string) => requestStatusUrl(deps.options?.publicBaseUrl, id);
  const shares = createFairShareView(deps.store);
  for (const [path, operation] of ROUTES) {
    app.post(path, requireJson, limitBody(deps.options?.bodyLimitBytes ?? 1024 * 1024), (c) => handle(c, operation));
  }

  async function handle(c: Context<Env>, operation: Operation): Promise<Response> {
    if (deps.stopTaking?.aborted) throw shuttingDown('Sluice is stopping and takes no new requests; retry shortly.');
    const body = await parseBody(c, operation);
    const policy = deps.policy();
    const model = own(policy.models, body.model);
    if (!model) throw modelNotFound(body.model);
    const account = c.get('account');
    const tier = own(policy.tiers, account.account.tier)!;
    const estimate = estimateTokenParts(operation, body, model.defaultMaxTokens);
    const tokenEstimate = estimate.prompt + estimate.output;
    const admission = await admit(
      deps.store,
      policy,
      {
        account,
        model: body.model,
        tokenEstimate,
        now: deps.clock.now(),
        // The reservoir place is named after the request, so a dispatcher that sheds it answers it.
        id: c.get('requestId'),
      },
      shares,
    );
    for (const [k, v] of Object.entries(rateLimitHeaders(admission.windows))) c.header(k, v);

    const who = {
      account: account.id,
      tenant: account.account.tenant,
      tier: account.account.tier,
      model: body.model,
      id: c.get('requestId'),
    };
    if (admission.outcome === 'reject') {
      deps.onAdmission?.({ ...who, outcome: 'rejected', reason: admission.reason, windows: admission.windows });
      if (admission.reason === 'request-too-large') {
        throw new ApiError(400, admission.message, 'invalid_request_error', 'request_too_large_for_limit');
      }
      throw new ApiError(
        429,
        admission.message,
        admission.reason.endsWith('tokens') ? 'tokens' : 'requests',
        'rate_limit_exceeded',
        null,
        {
          'retry-after': retryAfterSeconds(admission.retryAfterMs),
          'x-sluice-reason': admission.reason,
        },
      );
    }
    if (admission.warning) c.header('x-sluice-warning', admission.warning);
    if (admission.degraded) c.header('x-sluice-degraded', admission.degraded);

    const mode: ReplyMode = body.stream
      ? 'stream'
      : /\brespond-async\b/i.test(c.req.header('prefer') ?? '') || tier.replyMode === 'async'
        ? 'async'
        : 'sync';
    deps.onAdmission?.({
      ...who,
      outcome: 'admitted',
      mode,
      warning: admission.warning,
      degraded: admission.degraded,
      liteTopic: admission.liteTopic,
      windows: admission.windows,
    });
    const now = deps.clock.now();
    const envelope: Envelope = {
      id: c.get('requestId'),
      account: account.id,
      tenant: account.account.tenant,
      tier: account.account.tier,
      model: body.model,
      liteTopic: admission.liteTopic,
      operation,
      body,
      mode,
      enqueuedAt: now,
      deadline: now + tier.maxQueueWaitMs,
      tokenEstimate,
      promptEstimate: estimate.prompt,
      charged: [...admission.charged],
      reservoirKey: admission.reservoirKey,
      paceFactor: admission.paceFactor,
    };
    if (mode === 'async') await deps.results.track(envelope.id, envelope.tenant);
    await enqueue(envelope);

    if (mode === 'async') {
      c.header('preference-applied', 'respond-async');
      c.header('location', statusUrl(envelope.id));
      return c.json(
        { id: envelope.id, object: 'sluice.request', status: 'queued', status_url: statusUrl(envelope.id) },
        202,
      );
    }
    const waitMs = Math.min(envelope.deadline - now + upstreamTimeoutMs, maxSyncWaitMs);
    if (mode === 'stream') return relayStream(c, envelope, waitMs);
    const pending = deps.results.wait(envelope.id, waitMs, waitSignal(c));
    const early = await within(deps.clock, pending, keepaliveMs);
    if (!early) return keptAliveJson(c, envelope.id, pending);
    if (!early.value) throw stillRunning(c, envelope.id);
    return resultResponse(c, early.value);
  }

  /**
   * A sync answer that has not come within `keepaliveMs`: commit to 200 and a JSON body, send a
   * newline every `keepaliveMs` so CloudFront does not cut the connection, then the body. What
   * would have been an error status arrives as the OpenAI error object (`{"error": ...}`) in it.
   */
  function keptAliveJson(c: Context<Env>, id: string, pending: Promise<StoredResult | undefined>): Response {
    c.header('content-type', 'application/json; charset=UTF-8');
    c.header('x-sluice-keepalive', 'whitespace');
    return stream(c, async (out) => {
      let body: unknown;
      try {
        const result = await awaitKeepingAlive(deps.clock, pending, keepaliveMs, () =>
          out.write(JSON_KEEPALIVE).then(() => {}),
        );
        body = result ? result.body : stillRunning(c, id).body();
      } catch (error) {
        deps.log.warn({ id, err: String(error) }, 'sync wait failed after keepalive');
        body = stillRunning(c, id).body();
      }
      await out.write(JSON.stringify(body));
    });
  }

  async function parseBody(c: Context<Env>, operation: Operation) {
    const raw = await readJsonBody(c, maxBodyDepth);
    const parsed = bodies[operation].safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const param = issue.path.join('.') || null;
      throw new ApiError(
        400,
        `Invalid request: ${param ? `'${param}' ` : ''}${issue.message}.`,
        'invalid_request_error',
        'invalid_value',
        param,
      );
    }
    const crossField = crossFieldIssue(operation, parsed.data);
    if (crossField)
      throw new ApiError(
        400,
        `Invalid request: ${crossField.message}.`,
        'invalid_request_error',
        'invalid_value',
        crossField.param,
      );
    return parsed.data;
  }

  /** The queue spills to SQS itself when configured (functions/runtime/parts.ts); a throw here means nowhere took it. */
  async function enqueue(envelope: Envelope): Promise<void> {
    try {
      await deps.queue.send(envelope.liteTopic, encodeEnvelope(envelope));
      return;
    } catch (error) {
      deps.log.warn({ id: envelope.id, liteTopic: envelope.liteTopic, err: String(error) }, 'queue refused envelope');
    }
    // Not queued anywhere: give back the reservoir place (the window charge stays, as for any failed call).
    await deps.store.leaveReservoir(envelope.reservoirKey!);
    throw new ApiError(
      503,
      'The request queue is unavailable right now. Please retry.',
      'server_error',
      'queue_unavailable',
      null,
      { 'retry-after': '1' },
    );
  }

  function waitSignal(c: Context<Env>): AbortSignal {
    return deps.stopWaiting ? AbortSignal.any([c.req.raw.signal, deps.stopWaiting]) : c.req.raw.signal;
  }

  function shuttingDown(message: string): ApiError {
    return new ApiError(503, message, 'server_error', 'shutting_down', null, {
      'retry-after': '1',
      connection: 'close',
    });
  }

  function stillRunning(c: Context<Env>, id: string): ApiError {
    if (deps.stopWaiting?.aborted) return shuttingDown(`Sluice stopped before request ${id} was answered; retry it.`);
    const url = statusUrl(id);
    return new ApiError(
      504,
      `The request is still waiting or running; read its result later at ${url}.`,
      'timeout',
      'still_running',
      null,
      { location: url },
    );
  }

  async function relayStream(c: Context<Env>, envelope: Envelope, waitMs: number): Promise<Response> {
    const signal = waitSignal(c);
    const chunks = deps.results.chunks(envelope.id, waitMs, signal)[Symbol.asyncIterator]();
    const firstChunk = chunks.next();
    // Within keepaliveMs the status can still say what happened; past it, the stream starts with comments.
    const early = await within(deps.clock, firstChunk, keepaliveMs);
    if (early?.value.done) {
      // No chunk at all: answer with a plain status so clients see a real error.
      const result = await deps.results.get(envelope.id);
      if (!result || result.status === 'queued') throw stillRunning(c, envelope.id);
      if (result.status !== 'completed') return resultResponse(c, result);
    }
    const relay = streamRelay(envelope.operation, envelope.body);
    return streamSSE(c, async (sse) => {
      let sent = 0;
      const write = async (data: string) => {
        const event = relay(data);
        if (event) await sse.writeSSE(event);
        sent++;
      };
      const next = (p: Promise<IteratorResult<string>>) =>
        awaitKeepingAlive(deps.clock, p, keepaliveMs, () => sse.write(SSE_KEEPALIVE).then(() => {}));
      for (let item = await next(firstChunk); !item.done; item = await next(chunks.next())) await write(item.value);
      const result = await deps.results.get(envelope.id);
      if (result && result.status !== 'completed' && result.status !== 'queued')
        await sse.writeSSE({ data: JSON.stringify(result.body) });
      else if (!result && deps.stopWaiting?.aborted)
        await sse.writeSSE({ data: JSON.stringify(shuttingDown('Sluice stopped before this stream ended.').body()) });
      else if (sent === 0 && (!result || result.status === 'queued'))
        await sse.writeSSE({ data: JSON.stringify(stillRunning(c, envelope.id).body()) });
      if (endsWithDone(envelope.operation)) await sse.writeSSE({ data: '[DONE]' });
    });
  }

  return app;
}

export function resultResponse(c: Context, result: StoredResult): Response {
  // A refusal from the dispatcher says when to retry the way an admission refusal does.
  const headers = result.refusal
    ? { 'retry-after': retryAfterSeconds(result.refusal.retryAfterMs), 'x-sluice-reason': result.refusal.reason }
    : undefined;
  return c.json(result.body as object, result.httpStatus as 200, headers);
}
