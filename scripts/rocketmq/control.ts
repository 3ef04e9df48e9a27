import { createServer, type Server } from 'node:http';
import type { WildcardGroupOptions } from './admin.ts';
import type { RocketMQ } from './index.ts';

/**
 * Test workers run in other processes than the vitest global setup that owns the
 * JVMs, so broker chaos (kill -9, restart) and per-test topics/groups go through
 * this small loopback HTTP endpoint.
 */
export interface RocketMQControl {
  createLiteTopic(topic: string, expirationMinutes?: number): Promise<void>;
  createWildcardGroup(group: string, parentTopic: string, opts?: Partial<WildcardGroupOptions>): Promise<void>;
  updateBrokerConfig(values: Record<string, string | number | boolean>): Promise<void>;
  killBroker(): Promise<void>;
  restartBroker(): Promise<void>;
}

export function serveControl(mq: RocketMQ): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
      const run = async () => {
        switch (req.url) {
          case '/lite-topic':
            return mq.createLiteTopic(String(body.topic), body.expirationMinutes as number | undefined);
          case '/group':
            return mq.createWildcardGroup(
              String(body.group),
              String(body.parentTopic),
              (body.opts ?? {}) as Partial<WildcardGroupOptions>,
            );
          case '/broker/config':
            return mq.updateBrokerConfig(body as Record<string, string | number | boolean>);
          case '/broker/kill':
            return mq.killBroker();
          case '/broker/restart':
            return mq.restartBroker();
          default:
            throw new Error(`unknown control path ${req.url}`);
        }
      };
      run().then(
        () => res.writeHead(200).end('{}'),
        (err: unknown) => res.writeHead(500).end(JSON.stringify({ error: String(err) })),
      );
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    });
  });
}

export function controlClient(url: string): RocketMQControl {
  const call = async (path: string, body: unknown = {}) => {
    const res = await fetch(url + path, { method: 'POST', body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`rocketmq control ${path} failed: ${await res.text()}`);
  };
  return {
    createLiteTopic: (topic, expirationMinutes) => call('/lite-topic', { topic, expirationMinutes }),
    createWildcardGroup: (group, parentTopic, opts) => call('/group', { group, parentTopic, opts }),
    updateBrokerConfig: (values) => call('/broker/config', values),
    killBroker: () => call('/broker/kill'),
    restartBroker: () => call('/broker/restart'),
  };
}
