export {
  Spillover,
  SpillingLiteQueue,
  SPILLED_PREFIX,
  type SpilloverOptions,
  type SpillingOptions,
} from './spillover.js';
export { RedriveWorker, type RedriveOptions, type RedriveStats } from './redrive.js';
export { SqsDeadLetterQueue, type DeadLetterRecord, type DeadLetterQueueOptions } from './dead-letters.js';
export { ensureSluiceQueues } from './queues.js';
