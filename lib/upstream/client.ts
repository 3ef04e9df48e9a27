/**
 * The OpenAI-compatible client the dispatcher calls GPU endpoints with: undici with
 * keep-alive connections, a deadline per call, and SSE relayed payload by payload.
 */
import { Agent, request } from 'undici';
import type { Operation } from '../envelope.js';
import { UPSTREAM_PATHS, upstreamBody } from './request.js';
import { sseData } from './sse.js';
import { MAX_METRICS_BYTES, metricsUrl } from './engine-metrics.js';

export interface UpstreamCall {
  /** Base URL including the version prefix, e.g. http://127.0.0.1:8788/v1. */
  readonly baseUrl: string;
  readonly operation: Operation;
  readonly body: Record<string, unknown>;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface UpstreamReply {
  readonly status: number;
  /** Parsed JSON body; for a stream that succeeded, undefined. */
  readonly json: unknown;
  /** Seconds the upstream asked us to wait, when it said. */
  readonly retryAfterSec?: number;
}

export interface UpstreamClient {
  call(call: UpstreamCall): Promise<UpstreamReply>;
  /** Streams: `onData` gets each SSE payload (`[DONE]` excluded) in order. */
  stream(call: UpstreamCall, onData: (data: string) => Promise<void>): Promise<UpstreamReply>;
  /** The server's Prometheus page (engine-metrics.ts `metricsUrl`); rejects on a non-200 answer or past MAX_METRICS_BYTES. */
  metrics(baseUrl: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

export interface UpstreamClientOptions {
  readonly connections?: number;
  /** Bearer key the GPU endpoints require, if any. */
  readonly apiKey?: string;
}

export function createUpstreamClient(options: UpstreamClientOptions = {}): UpstreamClient {
  const agent = new Agent({ connections: options.connections ?? 64, keepAliveTimeout: 30_000 });

  async function send(call: UpstreamCall, stream: boolean) {
    const signals = [AbortSignal.timeout(call.timeoutMs), ...(call.signal ? [call.signal] : [])];
    const body = upstreamBody(call.operation, call.body, stream);
    return request(`${call.baseUrl.replace(/\/$/, '')}${UPSTREAM_PATHS[call.operation]}`, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        'content-type': 'application/json',
        accept: stream ? 'text/event-stream' : 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal: AbortSignal.any(signals),
    });
  }

  async function readJson(res: Awaited<ReturnType<typeof request>>): Promise<unknown> {
    const text = await res.body.text();
    try {
      return JSON.parse(text);
    } catch {
      return {
        error: { message: text.slice(0, 500) || `upstream answered ${res.statusCode}`, type: 'upstream_error' },
      };
    }
  }

  function retryAfter(res: Awaited<ReturnType<typeof request>>): number | undefined {
    const v = Number(res.headers['retry-after']);
    return Number.isFinite(v) && v >= 0 ? v : undefined;
  }

  return {
    async call(call) {
      const res = await send(call, false);
      return { status: res.statusCode, json: await readJson(res), retryAfterSec: retryAfter(res) };
    },
    async stream(call, onData) {
      const res = await send(call, true);
      if (res.statusCode !== 200)
        return { status: res.statusCode, json: await readJson(res), retryAfterSec: retryAfter(res) };
      for await (const data of sseData(res.body)) {
        if (data === '[DONE]') break;
        await onData(data);
      }
      return { status: 200, json: undefined };
    },
    async metrics(baseUrl, timeoutMs) {
      const res = await request(metricsUrl(baseUrl), {
        dispatcher: agent,
        headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
        signal: AbortSignal.timeout(timeoutMs),
      });
      const declared = Number(res.headers['content-length']);
      if (res.statusCode !== 200 || declared > MAX_METRICS_BYTES) {
        // dump() reads a little and closes the connection past that, so nothing large is read for nothing.
        await res.body.dump().catch(() => {});
        throw new Error(
          `${metricsUrl(baseUrl)} answered ${res.statusCode}${declared > MAX_METRICS_BYTES ? ` with ${declared} bytes` : ''}`,
        );
      }
      let text = '';
      const utf8 = new TextDecoder();
      for await (const chunk of res.body) {
        text += utf8.decode(chunk as Uint8Array, { stream: true });
        // Leaving the loop destroys the body: the rest is never read.
        if (text.length > MAX_METRICS_BYTES) break;
      }
      if (text.length > MAX_METRICS_BYTES)
        throw new Error(`${metricsUrl(baseUrl)} is larger than ${MAX_METRICS_BYTES} bytes`);
      return text;
    },
    async close() {
      await agent.close();
    },
  };
}
