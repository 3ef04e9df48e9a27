import pino from 'pino';
import type { Logger } from '../../lib/telemetry/log.js';

/** JSON logs on stderr, so stdout stays for what a person or a script reads. */
export function createLogger(level = 'info', name = 'sluice'): Logger & pino.Logger {
  return pino({ name, level }, pino.destination(2));
}
