export { RocketMQLiteQueue, MIN_SUSPEND_MS, type RocketMQLiteQueueOptions } from './queue.js';
export { mapSendError } from './errors.js';
