/**
 * Handler of Custom::ProxyTlsCertificate (infra/constructs/proxy-tls-certificate.ts), inlined
 * into the Lambda function as it is; plain CommonJS on node:crypto alone, so it needs no
 * bundling and no package (Node has no API that signs X.509 certificates: the few DER
 * structures are written here).
 *
 * On Create and Update it makes a CA (P-256) and a server certificate it signs for
 * `DnsName` (the name clients dial), then forgets the CA's private key: the CA can sign
 * nothing else, so trusting it trusts this one server key only. The server certificate and
 * key go to `ServerSecretId`, the CA certificate to `CaSecretId`, under the JSON field names
 * the properties give (functions/runtime/contract.ts). Delete leaves the secrets to their
 * own resources.
 */
'use strict';
const crypto = require('node:crypto');
const https = require('node:https');

// --- DER, only what a certificate needs.
function len(n) {
  if (n < 0x80) return Buffer.from([n]);
  const bytes = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag, ...parts) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
};
const seq = (...parts) => tlv(0x30, ...parts);
const set = (...parts) => tlv(0x31, ...parts);
function oid(dotted) {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift(0x80 | (v & 0x7f));
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}
function integer(buf) {
  let b = buf;
  while (b.length > 1 && b[0] === 0 && b[1] < 0x80) b = b.subarray(1);
  return tlv(0x02, b[0] >= 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}
const bool = (v) => tlv(0x01, Buffer.from([v ? 0xff : 0]));
const octets = (b) => tlv(0x04, b);
const bits = (b) => tlv(0x03, Buffer.from([0]), b);
const utf8 = (s) => tlv(0x0c, Buffer.from(s, 'utf8'));
const explicit = (n, inner) => tlv(0xa0 + n, inner);
function time(d) {
  // RFC 5280: UTCTime through 2049, GeneralizedTime from 2050.
  const s = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(s.slice(2))) : tlv(0x18, Buffer.from(s));
}

const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));
const name = (cn) => seq(set(seq(oid('2.5.4.3'), utf8(cn))));
const ext = (id, critical, value) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
const keyId = (key) =>
  crypto
    .createHash('sha1')
    .update(key.export({ type: 'spki', format: 'der' }))
    .digest();

function certificate({ subject, issuer, publicKey, signingKey, issuerKey, extensions, notBefore, notAfter }) {
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(Buffer.concat([Buffer.from([1]), crypto.randomBytes(15)])),
    ECDSA_SHA256,
    name(issuer),
    seq(time(notBefore), time(notAfter)),
    name(subject),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(
      3,
      seq(
        ext('2.5.29.14', false, octets(keyId(publicKey))),
        ext('2.5.29.35', false, seq(tlv(0x80, keyId(issuerKey)))),
        ...extensions,
      ),
    ),
  );
  const signature = crypto.sign('sha256', tbs, signingKey);
  const der = seq(tbs, ECDSA_SHA256, bits(signature));
  return `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)
    .join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** A CA and a server certificate for `dnsName`, valid `days` from an hour ago; the CA's key is not returned. */
function issue(dnsName, days, now = new Date()) {
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + days * 86400_000);
  const ca = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const server = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const caName = `sluice proxy CA ${crypto.randomBytes(6).toString('hex')}`;
  const caCert = certificate({
    subject: caName,
    issuer: caName,
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    issuerKey: ca.publicKey,
    notBefore,
    notAfter,
    // pathLen 0: it signs end-entity certificates only.
    extensions: [
      ext('2.5.29.19', true, seq(bool(true), integer(Buffer.from([0])))),
      ext('2.5.29.15', true, bits(Buffer.from([0x06]))),
    ],
  });
  const serverCert = certificate({
    subject: dnsName,
    issuer: caName,
    publicKey: server.publicKey,
    signingKey: ca.privateKey,
    issuerKey: ca.publicKey,
    notBefore,
    notAfter,
    extensions: [
      ext('2.5.29.19', true, seq()),
      ext('2.5.29.15', true, bits(Buffer.from([0x80]))),
      ext('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))),
      ext('2.5.29.17', false, seq(tlv(0x82, Buffer.from(dnsName, 'ascii')))),
    ],
  });
  // PKCS#8: what the proxy's Netty SslContext reads.
  const key = server.privateKey.export({ type: 'pkcs8', format: 'pem' });
  return { caCert, serverCert, key };
}

function respond(event, status, reason, physicalId) {
  const body = JSON.stringify({
    Status: status,
    Reason: String(reason).slice(0, 3000),
    PhysicalResourceId: physicalId,
    StackId: event.StackId,
    RequestId: event.RequestId,
    LogicalResourceId: event.LogicalResourceId,
    Data: {},
  });
  const url = new URL(event.ResponseURL);
  const request = url.protocol === 'https:' ? https.request : require('node:http').request;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

exports.issue = issue;
exports.handler = async (event) => {
  const p = event.ResourceProperties;
  const physicalId = `proxy-tls-${p.DnsName}`;
  try {
    if (event.RequestType === 'Delete')
      return await respond(event, 'SUCCESS', 'the secrets are their own resources', event.PhysicalResourceId);
    const { SecretsManagerClient, PutSecretValueCommand } = require('@aws-sdk/client-secrets-manager');
    const sm = new SecretsManagerClient({});
    const { caCert, serverCert, key } = issue(p.DnsName, Number(p.ValidityDays));
    await sm.send(
      new PutSecretValueCommand({
        SecretId: p.ServerSecretId,
        SecretString: JSON.stringify({ [p.CertField]: serverCert, [p.KeyField]: key }),
      }),
    );
    await sm.send(
      new PutSecretValueCommand({ SecretId: p.CaSecretId, SecretString: JSON.stringify({ [p.CaField]: caCert }) }),
    );
    await respond(event, 'SUCCESS', `issued for ${p.DnsName}`, physicalId);
  } catch (err) {
    console.error(err);
    await respond(
      event,
      'FAILED',
      err && err.message ? err.message : String(err),
      event.PhysicalResourceId || physicalId,
    );
  }
};
