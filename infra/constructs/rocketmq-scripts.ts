/**
 * Start-up scripts of the RocketMQ containers. The official image ships namesrv, broker,
 * proxy and mqadmin under $ROCKETMQ_HOME/bin; each task writes its config file at start
 * (so credentials come from the task's injected secrets, never from the template) and
 * `exec`s the Java process so it receives SIGTERM directly.
 */
import { ROCKETMQ } from '../config.ts';

export interface BrokerScriptOptions {
  readonly namesrvAddr: string;
  readonly storeDir: string;
  /** Enable ACL 2.0 with the super user from env RMQ_USER / RMQ_PASSWORD. */
  readonly auth: boolean;
}

const AUTHN = 'org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider';
const AUTHZ = 'org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider';

export function namesrvScript(): string {
  return 'exec "$ROCKETMQ_HOME/bin/mqnamesrv"';
}

export function brokerScript(o: BrokerScriptOptions): string {
  const lines = [
    `brokerClusterName=${ROCKETMQ.clusterName}`,
    'brokerName=broker-a',
    'brokerId=0',
    'brokerRole=ASYNC_MASTER',
    'flushDiskType=ASYNC_FLUSH',
    `listenPort=${ROCKETMQ.brokerPort}`,
    `namesrvAddr=${o.namesrvAddr}`,
    `storePathRootDir=${o.storeDir}`,
    `storePathCommitLog=${o.storeDir}/commitlog`,
    // LiteTopics are LMQ queues: both flags are required.
    'enableLmq=true',
    'enableMultiDispatch=true',
    'autoCreateTopicEnable=false',
    'autoCreateSubscriptionGroup=false',
  ];
  if (o.auth) {
    lines.push(
      'authenticationEnabled=true',
      `authenticationProvider=${AUTHN}`,
      'authenticationMetadataProvider=org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider',
      'authorizationEnabled=true',
      `authorizationProvider=${AUTHZ}`,
      'authorizationMetadataProvider=org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider',
      'initAuthenticationUser={"username":"$RMQ_USER","password":"$RMQ_PASSWORD"}',
      'innerClientAuthenticationCredentials={"accessKey":"$RMQ_USER","secretKey":"$RMQ_PASSWORD"}',
    );
  }
  return [
    'set -e',
    `mkdir -p ${o.storeDir}/commitlog`,
    `cat > /tmp/broker.conf <<EOF\n${lines.join('\n')}\nEOF`,
    'exec "$ROCKETMQ_HOME/bin/mqbroker" -c /tmp/broker.conf',
  ].join('\n');
}

export function proxyScript(namesrvAddr: string, auth: boolean): string {
  const conf: Record<string, unknown> = {
    rocketMQClusterName: ROCKETMQ.clusterName,
    namesrvAddr,
    grpcServerPort: ROCKETMQ.grpcPort,
    remotingListenPort: ROCKETMQ.remotingPort,
  };
  if (auth) {
    Object.assign(conf, {
      authenticationEnabled: true,
      authenticationProvider: AUTHN,
      authenticationMetadataProvider: 'org.apache.rocketmq.proxy.auth.ProxyAuthenticationMetadataProvider',
      authorizationEnabled: true,
      authorizationProvider: AUTHZ,
      authorizationMetadataProvider: 'org.apache.rocketmq.proxy.auth.ProxyAuthorizationMetadataProvider',
      // JSON-in-JSON: stringify escapes the inner quotes; the unquoted heredoc expands $RMQ_*.
      innerClientAuthenticationCredentials: '{"accessKey":"$RMQ_USER","secretKey":"$RMQ_PASSWORD"}',
    });
  }
  return [
    'set -e',
    `cat > /tmp/rmq-proxy.json <<EOF\n${JSON.stringify(conf, null, 1)}\nEOF`,
    `exec "$ROCKETMQ_HOME/bin/mqproxy" -pm cluster -pc /tmp/rmq-proxy.json -n '${namesrvAddr}'`,
  ].join('\n');
}

/**
 * One-off task run on every deploy that changes it: waits until the broker shows in
 * the cluster list, then creates (idempotently) the LITE parent topic and the wildcard
 * consumer group bound to it.
 */
export function initScript(namesrvAddr: string, liteTopicTtlMinutes: number, auth: boolean): string {
  const admin = `"$ROCKETMQ_HOME/bin/mqadmin"`;
  const n = `-n '${namesrvAddr}'`;
  const retry = '{"type":"EXPONENTIAL","exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":2}}';
  return [
    'set -e',
    ...(auth
      ? ['printf "accessKey: %s\\nsecretKey: %s\\n" "$RMQ_USER" "$RMQ_PASSWORD" > "$ROCKETMQ_HOME/conf/tools.yml"']
      : []),
    'i=0',
    `until ${admin} clusterList ${n} 2>/dev/null | grep -q broker-a; do`,
    '  i=$((i+1)); if [ "$i" -gt 60 ]; then echo "broker not registered after 10 min" >&2; exit 1; fi',
    '  echo "waiting for broker-a in clusterList"; sleep 10',
    'done',
    `${admin} updateTopic ${n} -c ${ROCKETMQ.clusterName} -t ${ROCKETMQ.parentTopic} -a +message.type=LITE,+lite.topic.expiration=${liteTopicTtlMinutes}`,
    `${admin} updateSubGroup ${n} -c ${ROCKETMQ.clusterName} -g ${ROCKETMQ.consumerGroup} -o true -r 5 -p '${retry}' --attributes +lite.bind.topic=${ROCKETMQ.parentTopic},+lite.sub.wildcard=true`,
    `${admin} topicRoute ${n} -t ${ROCKETMQ.parentTopic}`,
    'echo "sluice: topic and group ready"',
  ].join('\n');
}
