/**
 * The edge as a process of its own for the chaos bench: the deployed edge's parts
 * (createParts, role edge: Redis store behind the guard, RocketMQ with the SQS
 * spillover) and app, on a Node server. Prints `listening <url>` once up.
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createEdgeFromParts, edgeOptions } from '../../functions/edge/from-parts.js';
import { readConfig } from '../../functions/runtime/config.js';
import { createLogger } from '../../functions/runtime/logger.js';
import { createParts } from '../../functions/runtime/parts.js';
import { systemClock } from '../../functions/runtime/system-clock.js';

function envelopeId(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { id?: string }).id;
  } catch {
    return undefined;
  }
}

const config = readConfig(process.env);
const log = createLogger(config.SLUICE_LOG_LEVEL, 'sluice-edge');
// Each spilled envelope's id in the log, so the bench can say where a lost request went.
const onSpill = (liteTopic: string, body: string) =>
  log.info({ id: envelopeId(body), liteTopic }, 'envelope spilled to SQS');
const parts = await createParts(config, systemClock, log, { role: 'edge', onSpill });
const app = createEdgeFromParts({ parts, clock: systemClock, log, options: edgeOptions(config) });
const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info: AddressInfo) => {
  console.log(`listening http://127.0.0.1:${info.port}`);
});
process.on('SIGTERM', () => {
  server.close();
  void parts.close().finally(() => process.exit(0));
});
