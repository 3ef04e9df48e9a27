import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface RocketMQPorts {
  readonly namesrv: number;
  /** Broker listen port; the broker also takes this-2 (fast remoting) and this+1 (HA). */
  readonly broker: number;
  readonly proxyGrpc: number;
  readonly proxyRemoting: number;
}

export interface HomeFiles {
  readonly home: string;
  readonly namesrvConf: string;
  readonly brokerConf: string;
  readonly proxyConf: string;
}

export const CLUSTER = 'DefaultCluster';

/**
 * Writes the three server configs into `home`. Keys are checked against the 5.5.0
 * sources (NettyServerConfig, BrokerConfig, MessageStoreConfig, ProxyConfig).
 */
export function writeHome(home: string, ports: RocketMQPorts): HomeFiles {
  mkdirSync(join(home, 'conf'), { recursive: true });
  const namesrvConf = join(home, 'conf', 'namesrv.conf');
  writeFileSync(namesrvConf, props({ listenPort: ports.namesrv, bindAddress: '127.0.0.1' }));

  const brokerConf = join(home, 'conf', 'broker.conf');
  writeFileSync(
    brokerConf,
    props({
      brokerClusterName: CLUSTER,
      brokerName: 'broker-a',
      brokerId: 0,
      brokerRole: 'ASYNC_MASTER',
      flushDiskType: 'ASYNC_FLUSH',
      brokerIP1: '127.0.0.1',
      listenPort: ports.broker,
      bindAddress: '127.0.0.1',
      namesrvAddr: `127.0.0.1:${ports.namesrv}`,
      storePathRootDir: join(home, 'store'),
      storePathCommitLog: join(home, 'store', 'commitlog'),
      // LiteTopics are LMQ queues written through multi-dispatch; both are off by default.
      enableLmq: true,
      enableMultiDispatch: true,
      // Without the quota flag the broker creates LiteTopics until mmap or disk give
      // out; with it, a new LiteTopic past the cap is refused (LMQ_QUOTA_EXCEEDED, which
      // the proxy reports as LITE_TOPIC_QUOTA_EXCEEDED) and existing ones keep working.
      enableLmqQuota: true,
      maxLmqConsumeQueueNum: 30_000,
      // A wildcard consumer that (re)connects learns of LiteTopics with pending
      // messages from a full scan, scheduled 5 s after it registers and run by a loop
      // that wakes every liteEventCheckInterval (10 s by default): messages sent while
      // no consumer was connected waited ~14 s. With 1 s, ~6 s.
      liteEventCheckInterval: 1_000,
      liteEventFullDispatchDelayTimeForWildcardGroup: 2_000,
      // Sparse files, but each LiteTopic maps its own consume-queue file: keep the
      // per-file size small so thousands of LiteTopics fit in address space and disk.
      mappedFileSizeCommitLog: 256 * 1024 * 1024,
      mappedFileSizeConsumeQueue: 30_000 * 20,
      // A test box shares its disk with everything else; the 75% default would make
      // the broker refuse writes on a busy CI runner.
      diskMaxUsedSpaceRatio: 95,
    }),
  );

  const proxyConf = join(home, 'conf', 'rmq-proxy.json');
  writeFileSync(
    proxyConf,
    JSON.stringify(
      {
        rocketMQClusterName: CLUSTER,
        proxyMode: 'cluster',
        namesrvAddr: `127.0.0.1:${ports.namesrv}`,
        grpcServerPort: ports.proxyGrpc,
        remotingListenPort: ports.proxyRemoting,
        // The 30 s default only matters for in-flight long polls; tests stop often.
        grpcShutdownTimeSeconds: 2,
        // A closing LitePushConsumer waits for its in-flight long poll (20 s by default)
        // before it returns; 5 s keeps consumer restarts in tests short. New messages
        // still end a long poll at once.
        grpcClientConsumerMaxLongPollingTimeoutMillis: 5000,
      },
      null,
      2,
    ),
  );
  return { home, namesrvConf, brokerConf, proxyConf };
}

function props(values: Record<string, string | number | boolean>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n') + '\n';
}
