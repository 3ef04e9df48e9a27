/**
 * The one broker.conf: the settings every RocketMQ broker of Sluice runs with, deployed (the
 * Broker stack writes them in its container command), rehearsed (scripts/rehearse reads them
 * back from the template) and tested (scripts/rocketmq, test/setup/rocketmq.setup.ts). Only
 * where the broker runs differs: ports, addresses, paths. Keys are checked against the 5.5.0
 * sources (BrokerConfig, MessageStoreConfig, AuthConfig).
 */
import { ROCKETMQ } from '../config.ts';

/** Where a broker runs; everything else is BROKER_SETTINGS. */
export interface BrokerPlace {
  readonly listenPort: number;
  readonly namesrvAddr: string;
  readonly storeDir: string;
  /** The address the broker registers; unset: the broker picks its first interface (Fargate's task IP). */
  readonly brokerIP1?: string;
  readonly bindAddress?: string;
}

/** Keys that say where a broker runs: the rehearsal replaces them with its own. */
export const PLACE_KEYS = [
  'listenPort',
  'namesrvAddr',
  'storePathRootDir',
  'storePathCommitLog',
  'brokerIP1',
  'bindAddress',
] as const;

export type Props = Record<string, string | number | boolean>;

export const BROKER_SETTINGS: Props = {
  brokerClusterName: ROCKETMQ.clusterName,
  brokerName: 'broker-a',
  brokerId: 0,
  brokerRole: 'ASYNC_MASTER',
  flushDiskType: 'ASYNC_FLUSH',
  // LiteTopics are LMQ queues written through multi-dispatch; both are off by default.
  enableLmq: true,
  enableMultiDispatch: true,
  // Topics and groups are created on purpose (the init task, the tests' admin calls), never by a stray client.
  autoCreateTopicEnable: false,
  autoCreateSubscriptionGroup: false,
  // Without the quota flag the broker creates LiteTopics until mmap or disk give
  // out; with it, a new LiteTopic past the cap is refused (LMQ_QUOTA_EXCEEDED, which
  // the proxy reports as LITE_TOPIC_QUOTA_EXCEEDED) and existing ones keep working.
  enableLmqQuota: true,
  maxLmqConsumeQueueNum: 30_000,
  // A wildcard consumer that (re)connects learns of LiteTopics with pending messages from a
  // full scan, scheduled 5 s after it registers (fixed in 5.5.0) and run by a loop that
  // wakes every liteEventCheckInterval (10 s by default): a dispatcher restart would leave
  // them waiting. The scan delay below applies when a new message's event finds no
  // consumer with room for it (scripts/rocketmq/README.md).
  liteEventCheckInterval: 1_000,
  liteEventFullDispatchDelayTimeForWildcardGroup: 2_000,
  // Sparse files, but each LiteTopic maps its own consume-queue file: keep the per-file size
  // small so thousands of LiteTopics fit in address space and disk.
  mappedFileSizeCommitLog: 256 * 1024 * 1024,
  mappedFileSizeConsumeQueue: 30_000 * 20,
  // EFS reports a near-infinite disk; a test box shares its disk with everything else, where
  // the 75% default would make the broker refuse writes on a busy runner.
  diskMaxUsedSpaceRatio: 95,
};

const AUTHN = 'org.apache.rocketmq.auth.authentication.provider.DefaultAuthenticationProvider';
const AUTHZ = 'org.apache.rocketmq.auth.authorization.provider.DefaultAuthorizationProvider';

/** ACL 2.0 on the broker: the super user, created at first start, is also what its inner clients use. */
export function brokerAclSettings(user: string, password: string): Props {
  return {
    authenticationEnabled: true,
    authenticationProvider: AUTHN,
    authenticationMetadataProvider:
      'org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider',
    authorizationEnabled: true,
    authorizationProvider: AUTHZ,
    authorizationMetadataProvider: 'org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider',
    initAuthenticationUser: JSON.stringify({ username: user, password }),
    innerClientAuthenticationCredentials: JSON.stringify({ accessKey: user, secretKey: password }),
  };
}

/** ACL 2.0 on a cluster-mode proxy: it authenticates clients against the broker's users and ACLs. */
export function proxyAclSettings(user: string, password: string): Props {
  return {
    authenticationEnabled: true,
    authenticationProvider: AUTHN,
    authenticationMetadataProvider: 'org.apache.rocketmq.proxy.auth.ProxyAuthenticationMetadataProvider',
    authorizationEnabled: true,
    authorizationProvider: AUTHZ,
    authorizationMetadataProvider: 'org.apache.rocketmq.proxy.auth.ProxyAuthorizationMetadataProvider',
    // Without it a cluster-mode proxy calls the broker with no credentials and fails at start
    // ("create system broadcast topic ... failed": username cannot be null; DefaultMessagingProcessor).
    enableAclRpcHookForClusterMode: true,
    innerClientAuthenticationCredentials: JSON.stringify({ accessKey: user, secretKey: password }),
  };
}

export function brokerConf(place: BrokerPlace, acl?: { user: string; password: string }): Props {
  return {
    ...BROKER_SETTINGS,
    listenPort: place.listenPort,
    namesrvAddr: place.namesrvAddr,
    storePathRootDir: place.storeDir,
    storePathCommitLog: `${place.storeDir}/commitlog`,
    ...(place.brokerIP1 ? { brokerIP1: place.brokerIP1 } : {}),
    ...(place.bindAddress ? { bindAddress: place.bindAddress } : {}),
    ...(acl ? brokerAclSettings(acl.user, acl.password) : {}),
  };
}

/** Java properties text, one `key=value` a line. */
export function formatProps(values: Props): string {
  return `${Object.entries(values)
    .map(([k, v]) => `${k}=${v}`)
    .join('\n')}\n`;
}

/** The inverse of formatProps (no escapes: none of our values need them). */
export function parseProps(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
