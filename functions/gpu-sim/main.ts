/**
 * Runs the simulated GPU endpoint on its own, for benchmarks and manual poking:
 *   tsx functions/gpu-sim/main.ts --port 8788 --slots 8 --models sim-llm,sim-embed
 */
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { systemClock } from '../runtime/system-clock.js';
import { createGpuSim } from './app.js';
import type { GpuSimOptions } from './options.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    models: { type: 'string' },
    slots: { type: 'string' },
    'queue-limit': { type: 'string' },
    'max-queue-wait-ms': { type: 'string' },
    'queue-policy': { type: 'string' },
    'prefill-ms-per-ktoken': { type: 'string' },
    'base-token-ms': { type: 'string' },
    contention: { type: 'string' },
    'default-max-tokens': { type: 'string' },
    'decode-step-tokens': { type: 'string' },
    'failure-rate': { type: 'string' },
    'failure-status': { type: 'string' },
    name: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});

if (values.help) {
  console.log(
    'usage: gpu-sim [--port N] [--host H] [--models a,b] [--slots N] [--queue-limit N|none] [--max-queue-wait-ms N|none] [--queue-policy fcfs|priority]\n' +
      '               [--prefill-ms-per-ktoken N] [--base-token-ms N] [--contention F] [--default-max-tokens N]\n' +
      '               [--decode-step-tokens N]\n' +
      '               [--failure-rate F] [--failure-status 500|503|...] [--name S]\n' +
      'env: GPU_SIM_PORT (default 8788)',
  );
  process.exit(0);
}

/** Flags left out stay undefined so the zod defaults in options.ts apply. */
function num(flag: string | undefined): number | undefined {
  if (flag === undefined) return undefined;
  const n = Number(flag);
  if (!Number.isFinite(n)) throw new Error(`not a number: ${flag}`);
  return n;
}

/** `none` lifts the limit (null), as vLLM's waiting queue has none. */
function unbounded(flag: string | undefined): number | null | undefined {
  return flag === 'none' ? null : num(flag);
}

const options: GpuSimOptions = {
  clock: systemClock,
  models: values.models
    ?.split(',')
    .map((m) => m.trim())
    .filter(Boolean),
  slots: num(values.slots),
  queueLimit: unbounded(values['queue-limit']),
  maxQueueWaitMs: unbounded(values['max-queue-wait-ms']),
  queuePolicy: values['queue-policy'] as GpuSimOptions['queuePolicy'],
  prefillMsPerKToken: num(values['prefill-ms-per-ktoken']),
  baseTokenMs: num(values['base-token-ms']),
  contentionFactor: num(values.contention),
  defaultMaxTokens: num(values['default-max-tokens']),
  decodeStepTokens: num(values['decode-step-tokens']),
  failureRate: num(values['failure-rate']),
  failureStatus: num(values['failure-status']) as GpuSimOptions['failureStatus'],
  name: values.name,
};
const sim = createGpuSim(options);
const port = num(values.port ?? process.env.GPU_SIM_PORT) ?? 8788;

const server = serve({ fetch: sim.app.fetch, port, hostname: values.host }, (info) => {
  const s = sim.stats();
  console.log(
    `gpu-sim listening on http://${values.host}:${info.port} (${s.slots} slots, queue ${s.queueLimit ?? 'unbounded'})`,
  );
});

let stopping = false;
function shutdown(signal: string): void {
  if (stopping) process.exit(1); // a second Ctrl-C means "now"
  stopping = true;
  console.log(`gpu-sim: ${signal}, closing`);
  // Ending the generations first lets open streams finish, so server.close() does not hang on them.
  sim.close();
  server.close(() => process.exit(0));
  // Idle keep-alive sockets would otherwise hold close() open until they time out; after a
  // grace period for the 503s of cut-short requests to go out, so would any half-dead one.
  if ('closeIdleConnections' in server) {
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 500).unref();
  }
}
process.on('SIGINT', () => shutdown('SIGINT'));
process.on('SIGTERM', () => shutdown('SIGTERM'));
