/**
 * Stand-in for the public NLB's TLS listener of `brokerPublicTls`: TLS 1.3 only, ALPN h2
 * preferred, terminating here and forwarding the bytes to the proxy's gRPC port, as the NLB
 * forwards to its target group: over TLS again when the target group's protocol is TLS (the
 * proxies refuse plaintext), without checking the proxy's certificate, as the NLB does not.
 * The certificate (self-signed, made with openssl for `localhost`) stands in for the ACM
 * certificate; the edge trusts it through NODE_EXTRA_CA_CERTS.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, createServer } from 'node:tls';

export interface TlsListener {
  /** `localhost:<port>`: the name the certificate is for. */
  readonly endpoint: string;
  /** PEM of the certificate, for NODE_EXTRA_CA_CERTS. */
  readonly caFile: string;
  close(): Promise<void>;
}

export async function startTlsListener(options: {
  dir: string;
  target: { host: string; port: number; tls: boolean };
}): Promise<TlsListener> {
  const key = join(options.dir, 'nlb-key.pem');
  const cert = join(options.dir, 'nlb-cert.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  const server = createServer(
    { key: readFileSync(key), cert: readFileSync(cert), minVersion: 'TLSv1.3', ALPNProtocols: ['h2', 'http/1.1'] },
    (client) => {
      const { host, port } = options.target;
      const upstream = options.target.tls
        ? tlsConnect({ host, port, rejectUnauthorized: false, ALPNProtocols: ['h2'] })
        : connect(port, host);
      client.pipe(upstream).pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', end);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `localhost:${(server.address() as AddressInfo).port}`,
    caFile: cert,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
