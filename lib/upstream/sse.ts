/**
 * Splits a text/event-stream body into its events. Only what OpenAI-compatible servers
 * send is handled: `event:` and `data:` lines, comments and blank-line event ends.
 */
export interface SseEvent {
  /** The `event:` name, when the server gave one (the responses API does). */
  readonly event?: string;
  readonly data: string;
}

export async function* sseEvents(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  let event: string | undefined;
  for await (const piece of body) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length) yield event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') };
        data = [];
        event = undefined;
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      } else if (line.startsWith('event:')) {
        event = line.slice(line.startsWith('event: ') ? 7 : 6);
      }
    }
  }
  if (data.length) yield event === undefined ? { data: data.join('\n') } : { event, data: data.join('\n') };
}

/** The payloads of the `data:` fields, one per event. */
export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  for await (const e of sseEvents(body)) yield e.data;
}
