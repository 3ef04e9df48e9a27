import { describe, expect, it } from 'vitest';
import { DEFAULT_UPSTREAM_TIMEOUT_MS } from '../../../functions/runtime/config.js';
import { DEFAULT_HOLD_MAX_MS } from '../../../lib/dispatch/flow/scheduler.js';
import { MAX_IN_HAND_MS } from '../../../lib/queue/in-hand.js';

describe('MAX_IN_HAND_MS', () => {
  it('covers the longest hold in a room and the longest GPU call after it', () => {
    // Past it the queue delivers the message again while its call may still run.
    expect(DEFAULT_HOLD_MAX_MS + DEFAULT_UPSTREAM_TIMEOUT_MS).toBeLessThanOrEqual(MAX_IN_HAND_MS);
  });
});
