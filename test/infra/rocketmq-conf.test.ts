import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROCKETMQ_ROLES } from '../../infra/rocketmq/acl.ts';
import { BROKER_SETTINGS, parseProps, PLACE_KEYS } from '../../infra/rocketmq/broker-conf.ts';
import { PROXY_TLS } from '../../infra/constructs/rocketmq-scripts.ts';
import { PROXY_CONSUMER_SETTINGS } from '../../infra/rocketmq/proxy-conf.ts';
import { writeHome } from '../../scripts/rocketmq/config.ts';
import { deployedRocketMQConf } from '../../scripts/rehearse/broker-conf.ts';
import { Assembly } from '../../scripts/rehearse/templates.ts';
import { synthesize, type Synthesized } from './helpers.ts';

const TLS = {
  brokerPublicTls: JSON.stringify({
    certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/x',
    domainName: 'mq.example.com',
  }),
};
let plain: Synthesized;
let tls: Synthesized;
beforeAll(() => {
  plain = synthesize({}, { bundle: false });
  tls = synthesize(TLS, { bundle: false });
}, 180_000);
afterAll(() => {
  plain?.cleanup();
  tls?.cleanup();
});

const withoutPlace = (conf: Record<string, string>) =>
  Object.fromEntries(Object.entries(conf).filter(([k]) => !(PLACE_KEYS as readonly string[]).includes(k)));

describe('one broker.conf', () => {
  it("the deployed broker and the tests' broker run the same settings; only ports, addresses and paths differ", () => {
    const deployed = deployedRocketMQConf(new Assembly(plain.outdir));
    const home = mkdtempSync(join(tmpdir(), 'sluice-conf-'));
    try {
      const local = parseProps(
        readFileSync(writeHome(home, { namesrv: 1, broker: 2, proxyGrpc: 3, proxyRemoting: 4 }).brokerConf, 'utf8'),
      );
      const shared = Object.fromEntries(Object.entries(BROKER_SETTINGS).map(([k, v]) => [k, String(v)]));
      expect(withoutPlace(local)).toEqual(shared);
      // The deployed one adds ACL 2.0 (the tests' broker runs without, so their admin calls need no user).
      const deployedShared = Object.fromEntries(Object.keys(shared).map((k) => [k, deployed.broker[k]]));
      expect(deployedShared).toEqual(shared);
      expect(deployed.broker.authenticationEnabled).toBe('true');
      expect(deployed.broker.authorizationEnabled).toBe('true');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("the deployed proxy and the tests' proxy hand consumers the same receive batch", () => {
    const home = mkdtempSync(join(tmpdir(), 'sluice-conf-'));
    try {
      const local = JSON.parse(
        readFileSync(writeHome(home, { namesrv: 1, broker: 2, proxyGrpc: 3, proxyRemoting: 4 }).proxyConf, 'utf8'),
      ) as Record<string, unknown>;
      for (const s of [plain, tls]) {
        const { proxy } = deployedRocketMQConf(new Assembly(s.outdir));
        expect(proxy).toMatchObject(PROXY_CONSUMER_SETTINGS);
      }
      expect(local).toMatchObject(PROXY_CONSUMER_SETTINGS);
      // Not the proxy's default of 32 (see infra/rocketmq/proxy-conf.ts).
      expect(PROXY_CONSUMER_SETTINGS.grpcClientConsumerLongPollingBatchSize).toBeLessThan(32);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('the proxy authenticates and authorizes, and calls the broker with its inner credentials', () => {
    const { proxy } = deployedRocketMQConf(new Assembly(plain.outdir));
    expect(proxy).toMatchObject({
      authenticationEnabled: true,
      authorizationEnabled: true,
      enableAclRpcHookForClusterMode: true,
    });
    expect(proxy.innerClientAuthenticationCredentials).toContain('$RMQ_PASSWORD');
  });

  it('the proxy serves its own certificate and refuses plaintext, in both layouts (what the rehearsal runs)', () => {
    for (const s of [plain, tls]) {
      const conf = deployedRocketMQConf(new Assembly(s.outdir));
      expect(conf.proxy).toMatchObject({
        tlsTestModeEnable: false,
        tlsCertPath: PROXY_TLS.certPath,
        tlsKeyPath: PROXY_TLS.keyPath,
      });
      expect(conf.proxySystemProperties).toContain('-Dtls.server.mode=enforcing');
      expect(Object.keys(conf.proxySecrets)).toEqual(expect.arrayContaining([PROXY_TLS.env.cert, PROXY_TLS.env.key]));
    }
  });
});

describe('RocketMQ users, least privilege', () => {
  const initScript = (s: Synthesized) => {
    const a = new Assembly(s.outdir);
    for (const [, td] of a.resources(a.stack('Broker'), 'AWS::ECS::TaskDefinition')) {
      for (const c of td.Properties.ContainerDefinitions as Array<{
        Name: string;
        Command?: string[];
        Secrets?: Array<{ Name: string }>;
      }>) {
        if (c.Name === 'mqadmin')
          return { script: c.Command!.join(' '), secrets: (c.Secrets ?? []).map((x) => x.Name).sort() };
      }
    }
    throw new Error('no init container');
  };
  const acls = (script: string) =>
    [...script.matchAll(/createAcl .* -s "User:\$(\w+)" -r (\S+) -a (\S+) -d Allow/g)].map((m) => [m[1], m[2], m[3]]);

  it("default layout: the dispatchers' user only; it consumes its group and sends to the topic", () => {
    const { script, secrets } = initScript(plain);
    expect(acls(script)).toEqual([
      ['DISPATCHER_USER', 'Topic:sluice-requests', 'Pub,Sub'],
      ['DISPATCHER_USER', 'Group:sluice-dispatchers', 'Sub'],
    ]);
    expect(secrets).toEqual(['DISPATCHER_PASSWORD', 'DISPATCHER_USER', 'RMQ_PASSWORD', 'RMQ_USER']);
    expect(script).toMatch(/set -e/);
  });

  it("brokerPublicTls: the edge's user may only send to the parent topic, and the edge gets that user, not the super user", () => {
    const { script } = initScript(tls);
    expect(acls(script)).toContainEqual(['EDGE_USER', 'Topic:sluice-requests', 'Pub']);
    expect(acls(script).filter(([u]) => u === 'EDGE_USER')).toHaveLength(1);
    const edge = tls.template('edge').toJSON() as {
      Resources: Record<
        string,
        { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }
      >;
    };
    const fn = Object.values(edge.Resources).find(
      (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Environment?.Variables?.SLUICE_ROCKETMQ_SECRET_ID,
    );
    expect(JSON.stringify(fn!.Properties.Environment!.Variables!.SLUICE_ROCKETMQ_SECRET_ID)).toMatch(/EdgeCredentials/);
    expect(ROCKETMQ_ROLES.edge.acls).toEqual([{ resources: 'Topic:sluice-requests', actions: 'Pub' }]);
  });
});
