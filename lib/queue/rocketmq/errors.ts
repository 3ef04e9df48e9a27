import { LiteTopicQuotaExceededException } from 'rocketmq-client-nodejs';
import { LiteTopicQuotaError, QueueUnavailableError } from '../types.js';

// Proxy status codes (apache/rocketmq/v2 definition.proto): the thousands digit
// block follows HTTP. 429xx quota refusals for LiteTopics; 400xx, 401xx, 403xx,
// 413xx, 431xx mean the request itself is wrong (e.g. 40020 ILLEGAL_LITE_TOPIC,
// which 1.0.8's StatusChecker does not know and reports as UnsupportedException).
const QUOTA_CODES = new Set([42901, 42902]);
const REQUEST_FAULT_FAMILIES = new Set([400, 401, 403, 413, 431]);
const TOPIC_TYPE_UNKNOWN = /TopicMessageType validate failed, the expected type is UNSPECIFIED/;

/**
 * What a send failure means to Sluice: the broker is out of LiteTopic room (the edge
 * answers 429 for that tenant), the request itself is wrong (a bug: rethrown as is,
 * never spilled), or the queue is unavailable right now (the edge spills to SQS).
 * Not-found (404xx) counts as unavailable: while the only broker is down the proxy
 * has no route for the topic. So does a message-type mismatch that names the type
 * UNSPECIFIED: the proxy has not read the topic's configuration back yet (a broker
 * that just restarted), which says nothing about the request.
 */
export function mapSendError(err: unknown, liteTopic: string): Error {
  if (err instanceof LiteTopicQuotaExceededException) return new LiteTopicQuotaError(liteTopic, err.message);
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number') {
    if (QUOTA_CODES.has(code)) return new LiteTopicQuotaError(liteTopic, String(err));
    if (REQUEST_FAULT_FAMILIES.has(Math.floor(code / 100)) && !TOPIC_TYPE_UNKNOWN.test(String(err)))
      return err as Error;
  }
  if (err instanceof QueueUnavailableError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new QueueUnavailableError(`RocketMQ send to ${liteTopic} failed: ${message}`, { cause: err });
}
