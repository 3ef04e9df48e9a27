/**
 * Splits a text/event-stream body into the payloads of its `data:` fields, one per
 * event. Only what OpenAI-compatible servers send is handled: data lines, comments
 * and blank-line event ends.
 */
export async function* sseData(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const piece of body) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
      }
    }
  }
  if (data.length) yield data.join('\n');
}
