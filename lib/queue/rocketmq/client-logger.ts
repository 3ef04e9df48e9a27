import { format } from 'node:util';
import type { Logger } from '../../telemetry/log.js';

/**
 * rocketmq-client-nodejs logs printf-style through an EggLogger of its own per client,
 * all writing one file under ~/logs, and closes it at shutdown: the first client to
 * shut down closes the shared stream and every later client's shutdown lines fail
 * loudly on stderr. Given this logger, a client's own lines (start-up, RPC, shutdown)
 * go to Sluice's log instead, chatty info as debug. Its consume services still write
 * the file (they take the default logger whatever the client is given).
 */
export function rocketmqClientLogger(log: Logger) {
  const line = (args: unknown[]) => format(...(args as [unknown, ...unknown[]]));
  return {
    debug: (...args: unknown[]) => log.debug({ component: 'rocketmq-client' }, line(args)),
    info: (...args: unknown[]) => log.debug({ component: 'rocketmq-client' }, line(args)),
    warn: (...args: unknown[]) => log.warn({ component: 'rocketmq-client' }, line(args)),
    error: (...args: unknown[]) => log.error({ component: 'rocketmq-client' }, line(args)),
  };
}
