/**
 * The proxies' deploy-time certificate (infra/constructs/proxy-tls-handler.cjs, the custom
 * resource's inline handler): a server certificate for the dialed name that chains to a CA whose
 * key is gone, and that a TLS client trusting only that CA accepts for that name and no other.
 */
import { createRequire } from 'node:module';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { connect, createServer } from 'node:tls';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { trustOnlyForGrpc } from '../../functions/runtime/rocketmq-access.ts';

const { issue } = createRequire(import.meta.url)('../../infra/constructs/proxy-tls-handler.cjs') as {
  issue(dnsName: string, days: number, now?: Date): { caCert: string; serverCert: string; key: string };
};

function handshake(port: number, servername: string, ca: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca }, () => {
      resolve(socket.authorized ? 'authorized' : String(socket.authorizationError));
      socket.end();
    });
    socket.on('error', (e) => resolve(e.message));
  });
}

describe('proxy TLS certificate', () => {
  it('is for the dialed name only, signed by a CA that signs nothing else, valid for the days asked', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const r = issue('internal-nlb.elb.eu-west-1.amazonaws.com', 3650, now);
    const ca = new X509Certificate(r.caCert);
    const server = new X509Certificate(r.serverCert);
    expect(server.subjectAltName).toBe('DNS:internal-nlb.elb.eu-west-1.amazonaws.com');
    expect(server.checkIssued(ca)).toBe(true);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(ca.ca).toBe(true);
    expect(server.ca).toBe(false);
    expect(new Date(server.validTo).getTime()).toBe(Date.parse('2039-12-30T00:00:00Z'));
    // The key returned is the server's (PKCS#8, what the proxy reads), not the CA's.
    expect(r.key).toContain('BEGIN PRIVATE KEY');
    expect(server.checkPrivateKey(createPrivateKey(r.key))).toBe(true);
    expect(ca.checkPrivateKey(createPrivateKey(r.key))).toBe(false);
  });

  it('a client trusting only the CA accepts it for the dialed name, and refuses another name or another CA', async () => {
    const r = issue('localhost', 1);
    const other = issue('localhost', 1);
    const server = createServer({ key: r.key, cert: r.serverCert, minVersion: 'TLSv1.3' }, (c) => c.end());
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const port = (server.address() as AddressInfo).port;
    try {
      expect(await handshake(port, 'localhost', r.caCert)).toBe('authorized');
      expect(await handshake(port, 'proxy.example.com', r.caCert)).toMatch(/altnames|Hostname/i);
      expect(await handshake(port, 'localhost', other.caCert)).toMatch(/certificate|verify/i);
    } finally {
      server.close();
    }
  });
});

describe('dispatchers trust the CA for gRPC', () => {
  it('write it where GRPC_DEFAULT_SSL_ROOTS_FILE_PATH points, owner-only; without that variable they refuse to start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-ca-'));
    try {
      const { caCert } = issue('localhost', 1);
      const file = join(dir, 'roots.pem');
      trustOnlyForGrpc({ SLUICE_ROCKETMQ_CA_CERT: caCert, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: file });
      expect(readFileSync(file, 'utf8')).toBe(caCert);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(() =>
        trustOnlyForGrpc({ SLUICE_ROCKETMQ_CA_CERT: caCert, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH: undefined }),
      ).toThrow(/GRPC_DEFAULT_SSL_ROOTS_FILE_PATH/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
