/**
 * Start-up scripts of the RocketMQ containers. The official image ships namesrv, broker,
 * proxy and mqadmin under $ROCKETMQ_HOME/bin; each task writes its config file at start
 * (so credentials come from the task's injected secrets, never from the template) and
 * `exec`s the Java process so it receives SIGTERM directly.
 */
import { ROCKETMQ } from '../config.ts';
import type { RocketMQRole } from '../rocketmq/acl.ts';
import { brokerConf, formatProps, proxyAclSettings } from '../rocketmq/broker-conf.ts';
import { PROXY_CONSUMER_SETTINGS } from '../rocketmq/proxy-conf.ts';

export interface BrokerScriptOptions {
  readonly namesrvAddr: string;
  readonly storeDir: string;
}

/** Expanded by the unquoted heredoc from the task's injected secrets, so the template never holds them. */
const ENV_CREDENTIALS = { user: '$RMQ_USER', password: '$RMQ_PASSWORD' };

export function namesrvScript(): string {
  return 'exec "$ROCKETMQ_HOME/bin/mqnamesrv"';
}

/** The broker task: the one broker.conf (infra/rocketmq/broker-conf.ts) with ACL 2.0, its super user from env RMQ_USER / RMQ_PASSWORD. */
export function brokerScript(o: BrokerScriptOptions): string {
  const conf = brokerConf(
    { listenPort: ROCKETMQ.brokerPort, namesrvAddr: o.namesrvAddr, storeDir: o.storeDir },
    ENV_CREDENTIALS,
  );
  return [
    'set -e',
    `mkdir -p ${o.storeDir}/commitlog`,
    `cat > ${BROKER_CONF_PATH} <<EOF\n${formatProps(conf)}EOF`,
    `exec "$ROCKETMQ_HOME/bin/mqbroker" -c ${BROKER_CONF_PATH}`,
  ].join('\n');
}

/** Where the broker task writes its broker.conf (the rehearsal reads the heredoc that writes it). */
export const BROKER_CONF_PATH = '/tmp/broker.conf';

/**
 * The proxy's TLS: its certificate and key arrive as env RMQ_TLS_CERT / RMQ_TLS_KEY (ECS secrets), are
 * written to these files at start, and the JVM runs with `tls.server.mode=enforcing`: a plaintext client
 * is refused (the default, permissive, sniffs and accepts both). tlsTestModeEnable off, or the proxy
 * would serve a self-signed certificate of its own instead.
 */
export const PROXY_TLS = {
  certPath: '/tmp/tls/proxy.crt',
  keyPath: '/tmp/tls/proxy.key',
  env: { cert: 'RMQ_TLS_CERT', key: 'RMQ_TLS_KEY' },
  jvmOptions: '-Dtls.server.mode=enforcing',
} as const;

export function proxyScript(namesrvAddr: string): string {
  const conf: Record<string, unknown> = {
    rocketMQClusterName: ROCKETMQ.clusterName,
    namesrvAddr,
    grpcServerPort: ROCKETMQ.grpcPort,
    remotingListenPort: ROCKETMQ.remotingPort,
    // Routes answer the address and port the client used (an NLB's listener), not the task's own port.
    useEndpointPortFromRequest: true,
    tlsTestModeEnable: false,
    tlsCertPath: PROXY_TLS.certPath,
    tlsKeyPath: PROXY_TLS.keyPath,
    ...PROXY_CONSUMER_SETTINGS,
    // JSON-in-JSON: stringify escapes the inner quotes; the unquoted heredoc expands $RMQ_*.
    ...proxyAclSettings(ENV_CREDENTIALS.user, ENV_CREDENTIALS.password),
  };
  return [
    'set -e',
    'umask 077',
    'mkdir -p /tmp/tls',
    `printf '%s\\n' "$${PROXY_TLS.env.cert}" > ${PROXY_TLS.certPath}`,
    `printf '%s\\n' "$${PROXY_TLS.env.key}" > ${PROXY_TLS.keyPath}`,
    `cat > /tmp/rmq-proxy.json <<EOF\n${JSON.stringify(conf, null, 1)}\nEOF`,
    `exec "$ROCKETMQ_HOME/bin/mqproxy" -pm cluster -pc /tmp/rmq-proxy.json -n '${namesrvAddr}'`,
  ].join('\n');
}

/**
 * One-off task run on every deploy that changes it: waits until the broker shows in the
 * cluster list, then creates (idempotently) the LITE parent topic, the wildcard consumer group
 * bound to it, and the users of `roles` with their ACLs (infra/rocketmq/acl.ts). Runs as the
 * super user; every mqadmin failure exits non-zero, which fails the deploy.
 */
export function initScript(namesrvAddr: string, liteTopicTtlMinutes: number, roles: readonly RocketMQRole[]): string {
  const admin = `"$ROCKETMQ_HOME/bin/mqadmin"`;
  const n = `-n '${namesrvAddr}' -c ${ROCKETMQ.clusterName}`;
  const retry = '{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":2}}';
  const users = roles.flatMap((r) => {
    const u = `"$${r.env.user}"`;
    const p = `"$${r.env.password}"`;
    return [
      // createUser refuses an existing user; updateUser then sets the password the secret holds now.
      `${admin} createUser ${n} -u ${u} -p ${p} -t Normal || ${admin} updateUser ${n} -u ${u} -p ${p}`,
      ...r.acls.map(
        (a) => `${admin} createAcl ${n} -s "User:$${r.env.user}" -r ${a.resources} -a ${a.actions} -d Allow`,
      ),
      `${admin} listAcl ${n} -s "User:$${r.env.user}" | grep -q '${r.acls[0]!.resources}'`,
    ];
  });
  return [
    'set -e',
    'printf "accessKey: %s\\nsecretKey: %s\\n" "$RMQ_USER" "$RMQ_PASSWORD" > "$ROCKETMQ_HOME/conf/tools.yml"',
    'i=0',
    `until ${admin} clusterList -n '${namesrvAddr}' 2>/dev/null | grep -q broker-a; do`,
    '  i=$((i+1)); if [ "$i" -gt 60 ]; then echo "broker not registered after 10 min" >&2; exit 1; fi',
    '  echo "waiting for broker-a in clusterList"; sleep 10',
    'done',
    `${admin} updateTopic ${n} -t ${ROCKETMQ.parentTopic} -a +message.type=LITE,+lite.topic.expiration=${liteTopicTtlMinutes}`,
    `${admin} updateSubGroup ${n} -g ${ROCKETMQ.consumerGroup} -o true -r 5 -p '${retry}' --attributes +lite.bind.topic=${ROCKETMQ.parentTopic},+lite.sub.wildcard=true`,
    `${admin} topicRoute -n '${namesrvAddr}' -t ${ROCKETMQ.parentTopic}`,
    ...users,
    'echo "sluice: topic and group ready"',
  ].join('\n');
}
