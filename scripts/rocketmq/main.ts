/**
 * `tsx scripts/rocketmq/main.ts`: starts namesrv, broker and proxy on loopback and
 * keeps them up until Ctrl-C. Fixed ports by default so other local tools can find
 * them (namesrv 9876, broker 10911, proxy gRPC 8081); `--free-ports` picks free ones.
 * `--orderly=false` creates the group non-orderly (README, "Non-orderly groups").
 */
import { startRocketMQ } from './index.ts';

const freePorts = process.argv.includes('--free-ports');
const homeArg = process.argv.find((a) => a.startsWith('--home='))?.slice('--home='.length);
const orderlyArg = process.argv.find((a) => a.startsWith('--orderly='))?.slice('--orderly='.length);
if (orderlyArg !== undefined && orderlyArg !== 'true' && orderlyArg !== 'false')
  throw new Error('--orderly must be true or false');

const mq = await startRocketMQ({
  home: homeArg,
  ports: freePorts ? {} : { namesrv: 9876, broker: 10911, proxyGrpc: 8081, proxyRemoting: 8080 },
  ...(orderlyArg !== undefined ? { group: { orderly: orderlyArg === 'true' } } : {}),
});
console.log(`RocketMQ ${mq.version} is up.`);
console.log(`  proxy gRPC endpoints: ${mq.endpoints}`);
console.log(`  namesrv:              ${mq.namesrv}`);
console.log(`  parent topic:         ${mq.parentTopic} (LITE)`);
console.log(
  `  consumer group:       ${mq.consumerGroup} (wildcard, ${orderlyArg === 'false' ? 'non-orderly' : 'orderly'})`,
);
console.log(`  home (store, logs):   ${mq.home}`);
console.log('Press Ctrl-C to stop.');

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  await mq.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown());
process.on('SIGTERM', () => void shutdown());
