/**
 * How a lab client reads a streamed answer, one function for Sluice and every
 * baseline so their time to first token is measured alike: SSE events are read off
 * the response body as they arrive at the client, and the first one carrying
 * generated text stamps the attempt (the opening role-only chunk, usage chunks and
 * keep-alive comments are not a token to the user). A stream can still fail after
 * its 200: Sluice commits to a stream once it has waited past its keep-alive, and
 * then says expired or failed in an error event, which the client counts as the
 * refusal the same answer would have been without the stream.
 */
import type { Clock } from '../../lib/clock/clock.js';
import { sseData } from '../../lib/upstream/sse.js';
import type { Attempt } from './recorder.js';
import type { Outcome } from './systems.js';

interface ErrorEvent {
  readonly type?: unknown;
  readonly code?: unknown;
}

export function isEventStream(res: Response): boolean {
  return (res.headers.get('content-type') ?? '').startsWith('text/event-stream');
}

function parse(data: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(data);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A chunk with generated text (chat `delta.content`, completions `text`, responses `output_text.delta`). */
export function carriesText(chunk: Record<string, unknown>): boolean {
  const choices = chunk.choices;
  type Choice = { delta?: { content?: unknown }; text?: unknown };
  const choice = (Array.isArray(choices) ? choices[0] : undefined) as Choice | undefined;
  const responsesDelta = chunk.type === 'response.output_text.delta' ? chunk.delta : undefined;
  const text = choice?.delta?.content ?? choice?.text ?? responsesDelta;
  return typeof text === 'string' && text.length > 0;
}

/** What the same failure would have been as a plain HTTP answer (the reasons systems.ts gives those). */
function failure(error: ErrorEvent): Outcome {
  if (error.type === 'timeout') return { status: 504, reason: 'expired' };
  if (error.type === 'rate_limit_exceeded') return { status: 429, reason: 'limit:unknown' };
  return { status: 502, reason: 'upstream-failed' };
}

/**
 * Reads a 200 event stream to its end, stamping `rec.firstTokenAt` when the first text
 * arrives. After `signal` aborts (the client gave up) nothing more is read or stamped.
 */
export async function readStreamAnswer(
  res: Response,
  rec: Attempt,
  clock: Pick<Clock, 'now'>,
  signal: AbortSignal,
): Promise<Outcome> {
  if (!res.body) return { status: 502, reason: 'stream-without-body' };
  const reader = res.body.getReader();
  // The client closing its connection is what ends the read on abort.
  const cancel = () => void reader.cancel(signal.reason).catch(() => {});
  if (signal.aborted) cancel();
  else signal.addEventListener('abort', cancel, { once: true });
  async function* bytes(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  let error: ErrorEvent | undefined;
  let done = false;
  try {
    for await (const data of sseData(bytes())) {
      if (signal.aborted) break;
      if (data === '[DONE]') {
        done = true;
        break;
      }
      const chunk = parse(data);
      if (!chunk) continue;
      if (typeof chunk.error === 'object' && chunk.error !== null) error ??= chunk.error as ErrorEvent;
      else if (rec.firstTokenAt === undefined && carriesText(chunk)) rec.firstTokenAt = clock.now();
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    signal.removeEventListener('abort', cancel);
  }
  if (error) return failure(error);
  // A chat stream that stops before [DONE] was cut, not answered.
  return done ? { status: res.status } : { status: 502, reason: 'stream-cut' };
}
