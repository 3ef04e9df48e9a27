import { describe, expect, it } from 'vitest';
import { mapSendError } from '../../../lib/queue/rocketmq/errors.js';
import { QueueUnavailableError } from '../../../lib/queue/types.js';

const proxyError = (code: number, message: string) => Object.assign(new Error(message), { code });

describe('mapSendError', () => {
  it('takes a topic type the proxy has not read back yet (a broker just restarted) for an outage, so the envelope spills', () => {
    const err = proxyError(
      40014,
      'ProxyException: TopicMessageType validate failed, the expected type is UNSPECIFIED, but actual type is LITE',
    );
    expect(mapSendError(err, 'lt')).toBeInstanceOf(QueueUnavailableError);
  });

  it('keeps other bad requests as they are: a real type mismatch is a bug, not an outage', () => {
    const err = proxyError(
      40014,
      'ProxyException: TopicMessageType validate failed, the expected type is NORMAL, but actual type is LITE',
    );
    expect(mapSendError(err, 'lt')).toBe(err);
  });

  it('takes a missing route (the only broker down) for an outage', () => {
    expect(mapSendError(proxyError(40402, 'No topic route info'), 'lt')).toBeInstanceOf(QueueUnavailableError);
  });
});
