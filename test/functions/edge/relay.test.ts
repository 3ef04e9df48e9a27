import { describe, expect, it } from 'vitest';
import { endsWithDone, streamRelay } from '../../../functions/edge/relay.js';

const chunk = (extra: object) =>
  JSON.stringify({
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { content: 'a' }, finish_reason: null }],
    ...extra,
  });
const usageChunk = JSON.stringify({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [],
  usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
});

describe('streamRelay', () => {
  it('without include_usage: drops the usage chunk and the usage field Sluice asked for', () => {
    for (const stream_options of [undefined, null, { include_usage: false }]) {
      const relay = streamRelay('chat.completions', { model: 'm', stream: true, stream_options });
      expect(relay(usageChunk)).toBeUndefined();
      expect(JSON.parse(relay(chunk({ usage: null }))!.data)).not.toHaveProperty('usage');
      const plain = chunk({});
      expect(relay(plain)).toEqual({ data: plain });
    }
  });

  it('with include_usage: everything as the upstream sent it', () => {
    const relay = streamRelay('completions', { model: 'm', stream: true, stream_options: { include_usage: true } });
    expect(relay(usageChunk)).toEqual({ data: usageChunk });
    expect(relay(chunk({ usage: null }))).toEqual({ data: chunk({ usage: null }) });
  });

  it('a chunk whose content merely mentions "usage" is left alone', () => {
    const relay = streamRelay('chat.completions', { model: 'm' });
    const text = chunk({}).replace('"content":"a"', '"content":"\\"usage\\""');
    expect(relay(text)).toEqual({ data: text });
  });

  it('responses events keep their type as the SSE event name and end without [DONE]', () => {
    const relay = streamRelay('responses', { model: 'm' });
    const data = JSON.stringify({ type: 'response.output_text.delta', delta: 'a', sequence_number: 3 });
    expect(relay(data)).toEqual({ event: 'response.output_text.delta', data });
    expect(endsWithDone('responses')).toBe(false);
    expect(endsWithDone('chat.completions')).toBe(true);
  });
});
