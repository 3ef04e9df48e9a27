import { BadRequestException, LiteTopicQuotaExceededException } from 'rocketmq-client-nodejs';
import { LiteTopicQuotaError, QueueUnavailableError } from '../types.js';

// Proxy status codes for LiteTopic quota refusals: LITE_TOPIC_QUOTA_EXCEEDED on send,
// LITE_SUBSCRIPTION_QUOTA_EXCEEDED (and plain 429 on older paths) on subscription.
const QUOTA_CODES = new Set([42901, 42902]);

/**
 * What a send failure means to Sluice: the broker is out of LiteTopic room (the edge
 * answers 429 for that tenant), the request itself is wrong (a bug: rethrown as is),
 * or the queue is unavailable right now (the edge spills to SQS).
 */
export function mapSendError(err: unknown, liteTopic: string): Error {
  if (err instanceof LiteTopicQuotaExceededException) return new LiteTopicQuotaError(liteTopic, err.message);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && QUOTA_CODES.has(code)) return new LiteTopicQuotaError(liteTopic, String(err));
  if (err instanceof BadRequestException) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new QueueUnavailableError(`RocketMQ send to ${liteTopic} failed: ${message}`, { cause: err });
}
