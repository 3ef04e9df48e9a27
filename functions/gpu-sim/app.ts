/**
 * A simulated OpenAI-compatible inference server that behaves like a saturated GPU:
 * a fixed number of slots, a queue in front of them (429 when full, 503 after
 * maxQueueWaitMs; or unbounded with no timeout, as vLLM's; FIFO or by the body's
 * `priority`, as vLLM's `--scheduling-policy`), prefill plus per-token decode time that grows with occupancy,
 * and answers derived deterministically from the prompt. All time comes from the
 * injected Clock so it runs unchanged on a VirtualClock.
 *
 * Routes: POST /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/responses; GET /v1/models,
 * /v1/models/:id, /healthz, /stats. Admitted requests carry `x-sim-queue-ms`, the time
 * they waited for a slot, so benchmarks can split queueing from generation.
 */
import { Hono, type Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { z } from 'zod';
import { sleep } from '../../lib/clock/clock.js';
import { FaultInjector, type Fault } from './faults.js';
import { contention, decode, plan, prefillMs, type Load, type Plan } from './generation.js';
import {
  base64Floats,
  chatBodySchema,
  chatPrompt,
  completionBodySchema,
  completionPrompt,
  embeddingBodySchema,
  embeddingInputs,
  errorBody,
  responsesBodySchema,
  responsesPrompt,
  usage,
  validationError,
} from './openai.js';
import { parseGpuSimOptions, type GpuSimConfig, type GpuSimOptions } from './options.js';
import { chatFormat, completionFormat, responsesFormat, type Envelope, type Format } from './responses.js';
import { SlotPool } from './slots.js';
import { embeddingVector, tokensForChars } from './text.js';
import { createVllmMetrics } from './metrics.js';

export type { GpuSimOptions } from './options.js';

export interface GpuSimStats {
  name: string;
  slots: number;
  slotsBusy: number;
  queueLength: number;
  /** null: unbounded. */
  queueLimit: number | null;
  /** Requests answered in full (200, or a stream that reached [DONE]). */
  served: number;
  rejected429: number;
  rejected503: number;
  /** Requests answered with an injected fault. */
  faults: number;
  /** Requests whose client went away (or the simulator closed) before the answer was complete. */
  aborted: number;
  peakBusy: number;
  peakQueue: number;
  promptTokens: number;
  completionTokens: number;
  /** Busy slot-time over available slot-time since creation, in [0, 1]. */
  utilization: number;
  uptimeMs: number;
}

export interface GpuSim {
  app: Hono;
  stats(): GpuSimStats;
  /** Fault injection for tests and benchmarks: failNext, setFailureRate, setSlowdown. */
  faults: FaultInjector;
  /** Refuses new and queued requests and ends running generations. */
  close(): void;
}

/** Non-standard but widely understood (nginx): the client closed the request. */
const CLIENT_CLOSED = 499;

interface Admitted {
  /** Aborted when the client goes away, the stream is cancelled or the simulator closes. */
  signal: AbortSignal;
  abort(): void;
  /** Releases the slot and forgets the request; call exactly once, when it is over. */
  finish(): void;
}

export function createGpuSim(options: GpuSimOptions): GpuSim {
  const config = parseGpuSimOptions(options);
  const clock = config.clock;
  const startedAt = clock.now();
  const models = new Set(config.models);
  const faults = new FaultInjector(config.failureRate, config.failureStatus);
  const pool = new SlotPool({
    clock,
    slots: config.slots,
    queueLimit: config.queueLimit,
    maxQueueWaitMs: config.maxQueueWaitMs,
    policy: config.queuePolicy,
    initialHoldMs: config.baseTokenMs * ((config.minOutputTokens + config.maxOutputTokens) / 2),
  });
  const load: Load = { busy: () => pool.busy, slots: config.slots, slowdown: () => faults.slowdown };
  let closed = false;
  // Per-request controllers, aborted on close(). Not AbortSignal.any with a long-lived
  // "closing" signal: on Node 20 that retains every request's signal (nodejs/node#55351).
  const active = new Set<AbortController>();
  const count = {
    served: 0,
    rejected429: 0,
    rejected503: 0,
    faults: 0,
    aborted: 0,
    promptTokens: 0,
    completionTokens: 0,
  };
  let seq = 0;

  const stats = (): GpuSimStats => {
    const uptimeMs = clock.now() - startedAt;
    return {
      name: config.name,
      slots: config.slots,
      slotsBusy: pool.busy,
      queueLength: pool.queueLength,
      queueLimit: config.queueLimit,
      ...count,
      peakBusy: pool.peakBusy,
      peakQueue: pool.peakQueue,
      utilization: uptimeMs > 0 ? pool.busySlotMs() / (uptimeMs * config.slots) : 0,
      uptimeMs,
    };
  };

  const retryAfter = (): string => String(pool.retryAfterS(config.maxRetryAfterS));

  const faultResponse = (c: Context, fault: Fault): Response => {
    count.faults++;
    const overload = fault.status === 429 || fault.status === 503;
    if (overload) c.header('Retry-After', String(fault.retryAfterS ?? retryAfter()));
    const type =
      fault.status === 429 ? 'rate_limit_error' : fault.status < 500 ? 'invalid_request_error' : 'server_error';
    return c.json(errorBody(`Injected fault (${fault.status})`, type, 'injected_fault'), fault.status);
  };

  /** Model check, fault injection, then a slot: everything a request passes before the GPU. */
  const admit = async (
    c: Context,
    model: string,
    priority: number | null | undefined,
  ): Promise<Admitted | Response> => {
    if (!models.has(model)) return c.json(unknownModel(model), 404);
    if (priority && config.queuePolicy !== 'priority') {
      const message = `Got priority ${priority} but priority scheduling is not enabled.`;
      return c.json(errorBody(message, 'invalid_request_error', 'priority_not_enabled', 'priority'), 400);
    }
    const fault = faults.draw();
    if (fault) return faultResponse(c, fault);
    const own = new AbortController();
    const client = c.req.raw.signal;
    const clientGone = () => own.abort(client.reason);
    if (client.aborted) own.abort(client.reason);
    else client.addEventListener('abort', clientGone, { once: true });
    active.add(own);
    const forget = () => {
      active.delete(own);
      client.removeEventListener('abort', clientGone);
    };
    const got = await pool.acquire(own.signal, priority ?? 0);
    if (got.ok) {
      c.header('x-sim-queue-ms', String(got.lease.queuedMs));
      // Whether it waited behind busy slots at all: what "queued inside the GPU" counts.
      c.header('x-sim-queued', got.lease.queued ? '1' : '0');
      const lease = got.lease;
      return {
        signal: own.signal,
        abort: () => own.abort(),
        finish: () => {
          lease.release();
          forget();
        },
      };
    }
    forget();
    switch (got.reason) {
      case 'queue_full':
        count.rejected429++;
        c.header('Retry-After', retryAfter());
        return c.json(errorBody('Server busy: request queue is full.', 'rate_limit_error', 'queue_full'), 429);
      case 'queue_timeout':
        count.rejected503++;
        c.header('Retry-After', retryAfter());
        return c.json(
          errorBody(`No slot free within ${config.maxQueueWaitMs} ms.`, 'server_error', 'queue_timeout'),
          503,
        );
      case 'closed':
        count.rejected503++;
        return c.json(errorBody('Server is shutting down.', 'server_error', 'shutting_down'), 503);
      case 'aborted':
        count.aborted++;
        return new Response(null, { status: CLIENT_CLOSED });
    }
  };

  const envelope = (prefix: string, model: string, includeUsage: boolean): Envelope => ({
    id: `${prefix}-${config.name}-${++seq}`,
    created: Math.floor(clock.now() / 1000),
    model,
    fingerprint: config.name,
    includeUsage,
  });

  const kvCapacity = config.kvCacheTokens ?? config.slots * config.maxOutputTokens * 2;
  let kvTokens = 0;
  const metrics = createVllmMetrics(
    {
      running: () => pool.busy,
      waiting: () => pool.queueLength,
      kvCacheUsage: () => Math.min(1, kvTokens / kvCapacity),
    },
    config.models[0]!,
  );
  /** Holds the request's KV cache while it runs; the returned function frees it. */
  const holdKv = (p: Plan) => {
    const tokens = p.promptTokens + p.tokens.length;
    kvTokens += tokens;
    return () => void (kvTokens -= tokens);
  };

  const record = (p: Plan, model: string) => {
    metrics.served(model, p.promptTokens, p.tokens.length);
    count.served++;
    count.promptTokens += p.promptTokens;
    count.completionTokens += p.tokens.length;
  };

  /** A generation cut short: the client left (nobody reads the answer) or we are closing. */
  const interrupted = (c: Context): Response => {
    count.aborted++;
    if (!closed) return new Response(null, { status: CLIENT_CLOSED });
    return c.json(errorBody('Server is shutting down.', 'server_error', 'shutting_down'), 503);
  };

  const answer = async (c: Context, a: Admitted, p: Plan, format: Format, model: string): Promise<Response> => {
    let text = '';
    const freeKv = holdKv(p);
    try {
      for await (const token of decode(clock, config, load, p, a.signal)) text += token;
    } catch (err) {
      if (a.signal.aborted) return interrupted(c);
      throw err;
    } finally {
      freeKv();
      a.finish();
    }
    record(p, model);
    return c.json(format.full(text, p.finishReason, usage(p.promptTokens, p.tokens.length)));
  };

  const stream = (c: Context, a: Admitted, p: Plan, format: Format, includeUsage: boolean, model: string): Response =>
    streamSSE(c, async (sse) => {
      const freeKv = holdKv(p);
      sse.onAbort(() => a.abort());
      // A write blocks while nobody reads; closing the stream on abort unblocks it so the
      // generation notices the client is gone even if it stopped reading first.
      if (a.signal.aborted) sse.abort();
      else a.signal.addEventListener('abort', () => sse.abort(), { once: true });
      const send = (data: object | string) =>
        sse.writeSSE({ data: typeof data === 'string' ? data : JSON.stringify(data) });
      try {
        for (const chunk of format.opening()) await send(chunk);
        for await (const token of decode(clock, config, load, p, a.signal)) await send(format.token(token));
        const used = usage(p.promptTokens, p.tokens.length);
        for (const chunk of format.closing(p.finishReason, used)) await send(chunk);
        if (includeUsage) await send(format.usage(used));
        if (format.done) await send('[DONE]');
        // Writes after a disconnect fail silently, so reaching here does not prove delivery.
        if (a.signal.aborted) count.aborted++;
        else record(p, model);
      } catch (err) {
        if (!a.signal.aborted) throw err;
        count.aborted++;
      } finally {
        freeKv();
        a.finish();
      }
    });

  const app = new Hono();

  app.onError((err, c) => c.json(errorBody(`Internal error: ${err.message}`, 'server_error'), 500));
  app.notFound((c) =>
    c.json(errorBody(`Unknown route ${c.req.method} ${c.req.path}`, 'invalid_request_error', 'unknown_url'), 404),
  );

  // 503 once closing, so a load balancer stops sending before the process goes away.
  app.get('/healthz', (c) =>
    c.json(
      { status: closed ? 'closing' : 'ok', slotsBusy: pool.busy, queueLength: pool.queueLength },
      closed ? 503 : 200,
    ),
  );
  app.get('/stats', (c) => c.json(stats()));
  // What a vLLM server exposes for scraping: running and waiting sequences, KV-cache use, tokens.
  app.get('/metrics', async (c) =>
    c.text(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType }),
  );
  const modelObject = (id: string) => ({
    id,
    object: 'model',
    created: Math.floor(startedAt / 1000),
    owned_by: config.name,
  });
  app.get('/v1/models', (c) => c.json({ object: 'list', data: config.models.map(modelObject) }));
  app.get('/v1/models/:model{.+}', (c) => {
    const id = c.req.param('model');
    if (models.has(id)) return c.json(modelObject(id));
    return c.json(unknownModel(id), 404);
  });

  app.post('/v1/chat/completions', async (c) => {
    const body = await readBody(c, chatBodySchema);
    if (body instanceof Response) return body;
    const prompt = chatPrompt(body);
    const p = plan(config, prompt.key, prompt.chars, body.max_completion_tokens ?? body.max_tokens);
    const a = await admit(c, body.model, body.priority);
    if (a instanceof Response) return a;
    const includeUsage = body.stream_options?.include_usage === true;
    const format = chatFormat(envelope('chatcmpl', body.model, includeUsage && body.stream === true));
    return body.stream ? stream(c, a, p, format, includeUsage, body.model) : answer(c, a, p, format, body.model);
  });

  app.post('/v1/completions', async (c) => {
    const body = await readBody(c, completionBodySchema);
    if (body instanceof Response) return body;
    const key = completionPrompt(body);
    const p = plan(config, key, key.length, body.max_tokens);
    const a = await admit(c, body.model, body.priority);
    if (a instanceof Response) return a;
    const includeUsage = body.stream_options?.include_usage === true;
    const format = completionFormat(envelope('cmpl', body.model, includeUsage && body.stream === true));
    return body.stream ? stream(c, a, p, format, includeUsage, body.model) : answer(c, a, p, format, body.model);
  });

  app.post('/v1/responses', async (c) => {
    const body = await readBody(c, responsesBodySchema);
    if (body instanceof Response) return body;
    const prompt = responsesPrompt(body);
    const p = plan(config, prompt.key, prompt.chars, body.max_output_tokens);
    const a = await admit(c, body.model, body.priority);
    if (a instanceof Response) return a;
    const request = { instructions: body.instructions ?? null, maxOutputTokens: body.max_output_tokens ?? null };
    const format = responsesFormat(envelope('resp', body.model, false), request);
    return body.stream ? stream(c, a, p, format, false, body.model) : answer(c, a, p, format, body.model);
  });

  app.post('/v1/embeddings', async (c) => {
    const body = await readBody(c, embeddingBodySchema);
    if (body instanceof Response) return body;
    const inputs = embeddingInputs(body).map((i) => ({ ...i, tokens: i.tokens ?? tokensForChars(i.key.length) }));
    const promptTokens = inputs.reduce((n, i) => n + i.tokens, 0);
    const a = await admit(c, body.model, body.priority);
    if (a instanceof Response) return a;
    try {
      // Embedding is a forward pass without decode: it costs about what prefill costs.
      const ms = (config.embeddingBaseMs + prefillMs(config, promptTokens)) * contention(config, load);
      await sleep(clock, ms, a.signal);
    } catch (err) {
      if (a.signal.aborted) return interrupted(c);
      throw err;
    } finally {
      a.finish();
    }
    count.served++;
    count.promptTokens += promptTokens;
    const dims = body.dimensions ?? config.embeddingDims;
    return c.json({
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = embeddingVector(input.key, dims);
        return {
          object: 'embedding',
          index,
          embedding: body.encoding_format === 'base64' ? base64Floats(vector) : vector,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    });
  });

  return {
    app,
    stats,
    faults,
    close() {
      // The pool first, so waiters hear "closed" (503) rather than "aborted" (client gone).
      pool.close();
      closed = true;
      for (const request of active) request.abort(new Error('gpu-sim closed'));
    },
  };
}

function unknownModel(model: string) {
  return errorBody(`The model \`${model}\` does not exist.`, 'invalid_request_error', 'model_not_found', 'model');
}

async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S> | Response> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    return c.json(errorBody('Request body is not valid JSON.', 'invalid_request_error', 'invalid_json'), 400);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return c.json(validationError(parsed.error), 400);
  return parsed.data;
}

export type { GpuSimConfig };
