import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createLiteParentTopic, createWildcardGroup, updateBrokerConfig, type WildcardGroupOptions } from './admin.ts';
import { writeHome, type HomeFiles, type HomeOptions, type RocketMQPorts } from './config.ts';
import { killJava, portAccepts, startJava, stopJava, waitUntil, type JavaProcess } from './jvm.ts';
import { fetchJars } from './maven.ts';
import { brokerRegistered } from './remoting.ts';
import { freeBrokerPort, freePort } from './ports.ts';
import { ROCKETMQ_ARTIFACTS, ROCKETMQ_VERSION } from './version.ts';

export const DEFAULT_PARENT_TOPIC = 'sluice-requests';
export const DEFAULT_CONSUMER_GROUP = 'sluice-dispatchers';
/** Per JVM: on a shared two-core machine under load, a namesrv has taken over a minute to open its port. */
const START_TIMEOUT_MS = 180_000;

export interface StartRocketMQOptions {
  /** Jar cache root; `<cacheDir>/rocketmq-<version>/lib` holds the classpath. */
  readonly cacheDir?: string;
  /** Where store, logs and configs go; a fresh temp folder (deleted on stop) when omitted. */
  readonly home?: string;
  readonly ports?: Partial<RocketMQPorts>;
  readonly parentTopic?: string;
  readonly consumerGroup?: string;
  readonly group?: Partial<WildcardGroupOptions>;
  /** Minutes; the broker will not reclaim faster than 15. */
  readonly liteTopicExpirationMinutes?: number;
  /**
   * false: create no topic or group at start (the rehearsal runs the stack's own init script,
   * and a broker with ACL refuses this module's unauthenticated admin calls).
   */
  readonly createTopicAndGroup?: boolean;
  /** The broker.conf and proxy ACL to run with (the rehearsal: the Broker stack's); default the one broker.conf. */
  readonly config?: HomeOptions;
  /** `-D` system properties of the proxy JVM (the rehearsal: the Broker stack's, e.g. tls.server.mode). */
  readonly proxySystemProperties?: readonly string[];
  readonly log?: (line: string) => void;
}

export interface RocketMQ {
  /** gRPC endpoint of the proxy, as rocketmq-client-nodejs wants it (`host:port`). */
  readonly endpoints: string;
  readonly namesrv: string;
  readonly brokerAddr: string;
  readonly parentTopic: string;
  readonly consumerGroup: string;
  readonly version: string;
  readonly home: string;
  /** Creates another LITE parent topic, e.g. one per test so tests do not see each other's messages. */
  createLiteTopic(topic: string, expirationMinutes?: number): Promise<void>;
  /** Creates another wildcard consumer group bound to `parentTopic`. */
  createWildcardGroup(group: string, parentTopic: string, opts?: Partial<WildcardGroupOptions>): Promise<void>;
  /** Runtime broker settings (e.g. maxLmqConsumeQueueNum); lost on restart unless persisted by the broker. */
  updateBrokerConfig(values: Record<string, string | number | boolean>): Promise<void>;
  /** kill -9 of the broker JVM; namesrv and proxy stay up. */
  killBroker(): Promise<void>;
  /** Starts the broker again on the same ports and store, and waits until it is registered. */
  restartBroker(): Promise<void>;
  stop(): Promise<void>;
}

// Orderly stays the default: in a non-orderly group a burst of one LiteTopic drains
// several times faster, but a Suspend pauses the whole LiteTopic until the last one
// returned for its batch ends, so the dispatcher's paced messages run in lumps
// (README, "Non-orderly groups"). `group: { orderly: false }` / `--orderly=false` picks it.
const DEFAULT_GROUP: WildcardGroupOptions = { maxAttempts: 5, orderly: true, retryInitialMs: 1000, retryMaxMs: 60_000 };

export async function startRocketMQ(opts: StartRocketMQOptions = {}): Promise<RocketMQ> {
  const t0 = performance.now();
  const log =
    opts.log ?? ((line: string) => console.log(`[rocketmq] +${((performance.now() - t0) / 1000).toFixed(1)}s ${line}`));
  const started = performance.now();
  const cacheDir = resolve(opts.cacheDir ?? '.cache');
  const libDir = await fetchJars({
    dir: join(cacheDir, `rocketmq-${ROCKETMQ_VERSION}`),
    artifacts: ROCKETMQ_ARTIFACTS,
    log,
  });

  const ownHome = !opts.home;
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'sluice-rocketmq-'));
  mkdirSync(join(home, 'logs'), { recursive: true });
  const ports: RocketMQPorts = {
    namesrv: opts.ports?.namesrv ?? (await freePort()),
    broker: opts.ports?.broker ?? (await freeBrokerPort()),
    proxyGrpc: opts.ports?.proxyGrpc ?? (await freePort()),
    proxyRemoting: opts.ports?.proxyRemoting ?? (await freePort()),
  };
  const files = writeHome(home, ports, opts.config);
  const namesrv = `127.0.0.1:${ports.namesrv}`;
  const brokerAddr = `127.0.0.1:${ports.broker}`;
  const parentTopic = opts.parentTopic ?? DEFAULT_PARENT_TOPIC;
  const consumerGroup = opts.consumerGroup ?? DEFAULT_CONSUMER_GROUP;
  log(`RocketMQ ${ROCKETMQ_VERSION} home ${home}`);

  const procs: { namesrv?: JavaProcess; broker?: JavaProcess; proxy?: JavaProcess } = {};
  const stopAll = async () => {
    // Proxy and broker together (each takes ~10 s of shutdown hooks), then the namesrv
    // they deregister from.
    await Promise.all([procs.proxy, procs.broker].map((p) => (p ? stopJava(p) : undefined)));
    if (procs.namesrv) await stopJava(procs.namesrv);
  };

  try {
    log(`starting namesrv on ${namesrv}`);
    procs.namesrv = startServer(
      libDir,
      files,
      'namesrv',
      'org.apache.rocketmq.namesrv.NamesrvStartup',
      ['-c', files.namesrvConf],
      '-Xms128m -Xmx256m',
    );
    await waitUntil('namesrv port', () => portAccepts(ports.namesrv), {
      timeoutMs: START_TIMEOUT_MS,
      proc: procs.namesrv,
    });

    const startBroker = async () => {
      log(`starting broker on ${brokerAddr}`);
      procs.broker = startServer(
        libDir,
        files,
        'broker',
        'org.apache.rocketmq.broker.BrokerStartup',
        ['-c', files.brokerConf],
        '-Xms256m -Xmx1g -XX:MaxDirectMemorySize=512m',
      );
      await waitUntil('broker port', () => portAccepts(ports.broker), {
        timeoutMs: START_TIMEOUT_MS,
        proc: procs.broker,
      });
      await waitUntil('broker in clusterList', () => brokerRegistered(namesrv, brokerAddr), {
        timeoutMs: START_TIMEOUT_MS,
        proc: procs.broker,
      });
    };
    await startBroker();

    log(
      `starting proxy (cluster mode) with gRPC on 127.0.0.1:${ports.proxyGrpc}; creating LITE topic ${parentTopic} and wildcard group ${consumerGroup}`,
    );
    procs.proxy = startServer(
      libDir,
      files,
      'proxy',
      'org.apache.rocketmq.proxy.ProxyStartup',
      ['-pm', 'cluster', '-pc', files.proxyConf, '-n', namesrv],
      '-Xms128m -Xmx512m',
      opts.proxySystemProperties,
    );
    const expiration = opts.liteTopicExpirationMinutes ?? 60;
    await Promise.all([
      opts.createTopicAndGroup === false
        ? undefined
        : createLiteParentTopic(brokerAddr, parentTopic, { expirationMinutes: expiration }).then(() =>
            createWildcardGroup(brokerAddr, consumerGroup, parentTopic, { ...DEFAULT_GROUP, ...opts.group }),
          ),
      waitUntil('proxy gRPC port', () => portAccepts(ports.proxyGrpc), {
        timeoutMs: START_TIMEOUT_MS,
        proc: procs.proxy,
      }),
    ]);
    log(`ready in ${((performance.now() - started) / 1000).toFixed(1)} s: endpoints 127.0.0.1:${ports.proxyGrpc}`);

    let stopped = false;
    return {
      endpoints: `127.0.0.1:${ports.proxyGrpc}`,
      namesrv,
      brokerAddr,
      parentTopic,
      consumerGroup,
      version: ROCKETMQ_VERSION,
      home,
      async createLiteTopic(topic, expirationMinutes = expiration) {
        await createLiteParentTopic(brokerAddr, topic, { expirationMinutes });
      },
      async createWildcardGroup(group, topic, groupOpts) {
        await createWildcardGroup(brokerAddr, group, topic, { ...DEFAULT_GROUP, ...groupOpts });
      },
      updateBrokerConfig: (values) => updateBrokerConfig(brokerAddr, values),
      async killBroker() {
        if (procs.broker) {
          log('killing broker (SIGKILL)');
          await killJava(procs.broker);
        }
      },
      async restartBroker() {
        if (procs.broker?.isRunning()) await stopJava(procs.broker);
        await startBroker();
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        log('stopping proxy, broker, namesrv');
        await stopAll();
        // SLUICE_KEEP_ROCKETMQ_HOME=1 keeps the servers' logs (home/logs/rocketmqlogs) for a post-mortem.
        if (ownHome && process.env.SLUICE_KEEP_ROCKETMQ_HOME !== '1') rmSync(home, { recursive: true, force: true });
        log('stopped');
      },
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

function startServer(
  libDir: string,
  files: HomeFiles,
  role: 'namesrv' | 'broker' | 'proxy',
  mainClass: string,
  args: string[],
  heap: string,
  systemProperties: readonly string[] = [],
): JavaProcess {
  return startJava({
    name: role,
    libDir,
    mainClass,
    args,
    jvmArgs: [
      ...heap.split(' '),
      '-XX:+UseG1GC',
      // Store, namesrv kv config and ~/logs/rocketmqlogs all hang off user.home.
      `-Duser.home=${files.home}`,
      `-Drocketmq.home.dir=${files.home}`,
      // One shared classpath holds every role's logback file; pin this role's one.
      `-Drmq.logback.configurationFile=rmq.${role}.logback.xml`,
      ...systemProperties,
    ],
    logFile: join(files.home, 'logs', `${role}.out`),
    cwd: files.home,
    env: { ...process.env, ROCKETMQ_HOME: files.home, RMQ_PROXY_HOME: files.home },
  });
}
