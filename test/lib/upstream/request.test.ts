import { describe, expect, it } from 'vitest';
import { upstreamBody } from '../../../lib/upstream/request.js';
import { sseEvents } from '../../../lib/upstream/sse.js';

describe('upstreamBody', () => {
  it('streams always ask for usage, keeping the client’s other stream options', () => {
    expect(
      upstreamBody(
        'chat.completions',
        { model: 'm', stream_options: { include_usage: false, include_obfuscation: false } },
        true,
      ),
    ).toEqual({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true, include_obfuscation: false },
    });
    expect(upstreamBody('completions', { model: 'm', stream_options: null }, true)).toMatchObject({
      stream_options: { include_usage: true },
    });
  });

  it('non-streaming calls carry no stream_options', () => {
    expect(upstreamBody('chat.completions', { model: 'm', stream_options: { include_usage: true } }, false)).toEqual({
      model: 'm',
      stream: false,
    });
  });

  it('responses report usage unasked; embeddings have no stream field at all', () => {
    expect(upstreamBody('responses', { model: 'm', input: 'x' }, true)).toEqual({
      model: 'm',
      input: 'x',
      stream: true,
    });
    expect(upstreamBody('embeddings', { model: 'm', input: 'x' }, false)).toEqual({ model: 'm', input: 'x' });
  });
});

describe('sseEvents', () => {
  it('keeps event names, joins multi-line data, skips comments, across split chunks', async () => {
    async function* body() {
      yield ': comment\nevent: response.created\nda';
      yield 'ta: {"a":1}\n\ndata: x\ndata: y\n\r\n';
      yield 'data: [DONE]\n\n';
    }
    const out = [];
    for await (const e of sseEvents(body())) out.push(e);
    expect(out).toEqual([{ event: 'response.created', data: '{"a":1}' }, { data: 'x\ny' }, { data: '[DONE]' }]);
  });
});
