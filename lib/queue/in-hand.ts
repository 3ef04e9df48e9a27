/**
 * Longest a delivered message stays in hand (received, its handler not yet settled) before
 * the queue gives it to a consumer again. The RocketMQ adapter keeps renewing a received
 * message's invisible time up to this (rocketmq/renew.ts); the embedded queue delivers a
 * message again once its handler has run this long (embedded.ts). The dispatcher's hold
 * (DEFAULT_HOLD_MAX_MS in dispatch/flow/scheduler.ts) and the GPU call after it fit inside.
 */
export const MAX_IN_HAND_MS = 10 * 60_000;
