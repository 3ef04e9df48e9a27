import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROCKETMQ } from '../../infra/config.ts';
import { brokerConf as oneBrokerConf, formatProps, PLACE_KEYS } from '../../infra/rocketmq/broker-conf.ts';
import { PROXY_CONSUMER_SETTINGS } from '../../infra/rocketmq/proxy-conf.ts';

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

export const CLUSTER = ROCKETMQ.clusterName;

export interface HomeOptions {
  /**
   * A broker.conf read from elsewhere (the rehearsal: the Broker stack's), used as is but for
   * where the broker runs (PLACE_KEYS). Default: the one broker.conf, infra/rocketmq/broker-conf.ts.
   */
  readonly brokerSettings?: Record<string, string>;
  /** Proxy settings read from elsewhere (the rehearsal: the Broker stack's), over the local ones but for ports and addresses. */
  readonly proxySettings?: Record<string, unknown>;
}

/**
 * Writes the three server configs into `home`: the broker's from the one broker.conf the
 * Broker stack deploys, with local ports, addresses and paths.
 */
export function writeHome(home: string, ports: RocketMQPorts, options: HomeOptions = {}): HomeFiles {
  mkdirSync(join(home, 'conf'), { recursive: true });
  const namesrvConf = join(home, 'conf', 'namesrv.conf');
  writeFileSync(namesrvConf, formatProps({ listenPort: ports.namesrv, bindAddress: '127.0.0.1' }));

  const brokerConf = join(home, 'conf', 'broker.conf');
  const place = {
    listenPort: ports.broker,
    namesrvAddr: `127.0.0.1:${ports.namesrv}`,
    storeDir: join(home, 'store'),
    brokerIP1: '127.0.0.1',
    bindAddress: '127.0.0.1',
  };
  const local = oneBrokerConf(place);
  const settings = options.brokerSettings
    ? { ...withoutPlace(options.brokerSettings), ...Object.fromEntries(PLACE_KEYS.map((k) => [k, local[k]!])) }
    : local;
  writeFileSync(brokerConf, formatProps(settings));

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
        ...PROXY_CONSUMER_SETTINGS,
        ...withoutProxyPlace(options.proxySettings ?? {}),
      },
      null,
      2,
    ),
  );
  return { home, namesrvConf, brokerConf, proxyConf };
}

function withoutProxyPlace(settings: Record<string, unknown>): Record<string, unknown> {
  const { namesrvAddr: _n, grpcServerPort: _g, remotingListenPort: _r, ...rest } = settings;
  return rest;
}

function withoutPlace(settings: Record<string, string>): Record<string, string> {
  const out = { ...settings };
  for (const k of PLACE_KEYS) delete out[k];
  return out;
}
