/**
 * An UpstreamClient that calls a fetch function in the same process (a Hono app's
 * `app.fetch`, e.g. the simulated GPU) instead of opening a socket. Its deadline runs
 * on the injected Clock, so under a VirtualClock no real socket or timer is involved
 * and a scenario replays deterministically, much faster than real time.
 * Streams are parsed with the same SSE reader as the network client.
 */
import type { Clock } from '../clock/clock.js';
import type { UpstreamCall, UpstreamClient, UpstreamReply } from './client.js';
import { UPSTREAM_PATHS, upstreamBody } from './request.js';
import { sseData } from './sse.js';
import { MAX_METRICS_BYTES, metricsUrl } from './engine-metrics.js';

export type FetchFunction = (request: Request) => Response | Promise<Response>;

export interface InProcessUpstreamOptions {
  /**
   * The fetch to call: one for every base URL, or one per URL origin
   * (`{ 'http://gpu-1': gpu1.app.fetch }`) for a pool of simulated endpoints.
   */
  readonly fetch: FetchFunction | Readonly<Record<string, FetchFunction>>;
  /** Runs each call's deadline; without it calls have no deadline. */
  readonly clock?: Clock;
  /** Told of every reply before its body is read (status and headers), e.g. to count GPU refusals. */
  readonly onResponse?: (call: UpstreamCall, response: Response) => void;
}

export function createInProcessUpstream(options: InProcessUpstreamOptions): UpstreamClient {
  const open = new Set<AbortController>();

  function fetchFor(url: URL): FetchFunction {
    if (typeof options.fetch === 'function') return options.fetch;
    const f = options.fetch[url.origin];
    if (!f) throw new Error(`no in-process upstream for ${url.origin}`);
    return f;
  }

  /** Aborts the request on the deadline, on the caller's signal, or on close(). */
  function deadline(call: { readonly timeoutMs: number; readonly signal?: AbortSignal }): {
    signal: AbortSignal;
    done: () => void;
  } {
    const controller = new AbortController();
    open.add(controller);
    const onAbort = () => controller.abort(call.signal?.reason);
    if (call.signal?.aborted) controller.abort(call.signal.reason);
    else call.signal?.addEventListener('abort', onAbort, { once: true });
    const cancelTimer = options.clock?.setTimer(call.timeoutMs, () =>
      controller.abort(new DOMException(`upstream call exceeded ${call.timeoutMs} ms`, 'TimeoutError')),
    );
    return {
      signal: controller.signal,
      done: () => {
        cancelTimer?.();
        call.signal?.removeEventListener('abort', onAbort);
        open.delete(controller);
      },
    };
  }

  async function send(call: UpstreamCall, stream: boolean, signal: AbortSignal): Promise<Response> {
    const url = new URL(`${call.baseUrl.replace(/\/$/, '')}${UPSTREAM_PATHS[call.operation]}`);
    const body = upstreamBody(call.operation, call.body, stream);
    const request = new Request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    // An abort must end the call even if the app ignores the request's signal.
    const response = await raceAbort(Promise.resolve(fetchFor(url)(request)), signal);
    options.onResponse?.(call, response);
    return response;
  }

  return {
    async call(call): Promise<UpstreamReply> {
      const d = deadline(call);
      try {
        const res = await send(call, false, d.signal);
        return { status: res.status, json: await raceAbort(readJson(res), d.signal), retryAfterSec: retryAfter(res) };
      } finally {
        d.done();
      }
    },
    async stream(call, onData): Promise<UpstreamReply> {
      const d = deadline(call);
      try {
        const res = await send(call, true, d.signal);
        if (res.status !== 200)
          return { status: res.status, json: await raceAbort(readJson(res), d.signal), retryAfterSec: retryAfter(res) };
        if (!res.body) return { status: 200, json: undefined };
        const reader = res.body.getReader();
        // Cancelling the reader ends the read loop below and tells the app its client left.
        const cancel = () => void reader.cancel(d.signal.reason).catch(() => {});
        d.signal.addEventListener('abort', cancel, { once: true });
        try {
          for await (const data of sseData(chunksOf(reader))) {
            if (data === '[DONE]') break;
            await onData(data);
            if (d.signal.aborted) break;
          }
          if (d.signal.aborted) throw d.signal.reason;
        } finally {
          d.signal.removeEventListener('abort', cancel);
          reader.releaseLock();
        }
        return { status: 200, json: undefined };
      } finally {
        d.done();
      }
    },
    async metrics(baseUrl, timeoutMs) {
      const url = new URL(metricsUrl(baseUrl));
      const d = deadline({ timeoutMs });
      try {
        const res = await raceAbort(Promise.resolve(fetchFor(url)(new Request(url, { signal: d.signal }))), d.signal);
        const text = await raceAbort(res.text(), d.signal);
        if (res.status !== 200) throw new Error(`${url.href} answered ${res.status}`);
        if (text.length > MAX_METRICS_BYTES) throw new Error(`${url.href} is larger than ${MAX_METRICS_BYTES} bytes`);
        return text;
      } finally {
        d.done();
      }
    },
    async close() {
      for (const c of open) c.abort(new Error('upstream client closed'));
      open.clear();
    },
  };
}

async function* chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}

async function readJson(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: text.slice(0, 500) || `upstream answered ${res.status}`, type: 'upstream_error' } };
  }
}

function retryAfter(res: Response): number | undefined {
  const raw = res.headers.get('retry-after');
  if (raw === null) return undefined;
  const v = Number(raw);
  return Number.isFinite(v) && v >= 0 ? v : undefined;
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
