/** `tsx scripts/elasticmq/main.ts [--port=9324]`: ElasticMQ (SQS API) on loopback until Ctrl-C. */
import { startElasticMQ } from './index.ts';

const portArg = process.argv.find((a) => a.startsWith('--port='))?.slice('--port='.length);
const mq = await startElasticMQ({ port: portArg ? Number(portArg) : 9324 });
console.log(`ElasticMQ ${mq.version} is up: SQS endpoint ${mq.endpoint}. Press Ctrl-C to stop.`);
const shutdown = async () => {
  await mq.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
