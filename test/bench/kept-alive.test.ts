import { describe, expect, it } from 'vitest';
import { keptAliveFailure } from '../../bench/lib/kept-alive.js';
import { isOk } from '../../bench/lib/recorder.js';
import { openAiError } from '../../lib/openai-error.js';

// The error objects the dispatcher stores, as a kept-alive 200 carries them in its body.
describe('lab: a kept-alive 200 carrying an error counts as that failure', () => {
  const cases: Array<[string, ReturnType<typeof openAiError>, number, string]> = [
    ['expired in queue', openAiError('waited too long', 'timeout', 'queue_wait_exceeded'), 504, 'expired'],
    [
      'cannot start before its deadline',
      openAiError('busy', 'rate_limit_exceeded', 'capacity_deadline'),
      429,
      'limit:capacity_deadline',
    ],
    ['upstream failed for good', openAiError('no', 'upstream_error', 'upstream_failed'), 502, 'upstream-failed'],
    ['queue unavailable', openAiError('no', 'server_error', 'queue_unavailable'), 503, 'queue-unavailable'],
  ];
  for (const [name, body, status, reason] of cases) {
    it(name, () => {
      const out = keptAliveFailure(body.error);
      expect(out).toEqual({ status, reason });
      expect(isOk(out.status)).toBe(false);
    });
  }
  it('an unknown error is still a failure', () => {
    expect(isOk(keptAliveFailure({ code: 'something_new' }).status)).toBe(false);
  });
});
