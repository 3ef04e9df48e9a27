import { connect } from 'node:net';

/**
 * One request over RocketMQ's remoting protocol (the namesrv/broker TCP protocol):
 * a length-prefixed frame holding a JSON header and an optional body. Used for
 * readiness polling, where starting an mqadmin JVM per poll would cost seconds.
 */
export function remotingRequest(
  addr: string,
  code: number,
  extFields: Record<string, string> = {},
  body: Buffer = Buffer.alloc(0),
  timeoutMs = 5000,
): Promise<{ code: number; remark: string | null; body: Buffer }> {
  const [host, portText] = addr.split(':');
  const header = Buffer.from(
    JSON.stringify({ code, language: 'JAVA', version: 0, opaque: 1, flag: 0, remark: null, extFields }),
  );
  const frame = Buffer.alloc(8);
  frame.writeInt32BE(4 + header.length + body.length, 0);
  // High byte 0 = JSON header serialization.
  frame.writeInt32BE(header.length, 4);
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(portText) });
    socket.setTimeout(timeoutMs);
    let buf = Buffer.alloc(0);
    socket.once('connect', () => socket.write(Buffer.concat([frame, header, body])));
    socket.on('data', (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 4) return;
      const total = buf.readInt32BE(0);
      if (buf.length < 4 + total) return;
      const headerLength = buf.readInt32BE(4) & 0xffffff;
      const parsed = JSON.parse(buf.subarray(8, 8 + headerLength).toString()) as { code: number; remark?: string };
      socket.destroy();
      resolve({ code: parsed.code, remark: parsed.remark ?? null, body: buf.subarray(8 + headerLength, 4 + total) });
    });
    socket.once('timeout', () => {
      socket.destroy();
      reject(new Error(`remoting request ${code} to ${addr} timed out`));
    });
    socket.once('error', reject);
  });
}

const GET_BROKER_CLUSTER_INFO = 106;

/** True when the namesrv lists `brokerAddr` in its cluster info (what `mqadmin clusterList` shows). */
export async function brokerRegistered(namesrv: string, brokerAddr: string): Promise<boolean> {
  try {
    const res = await remotingRequest(namesrv, GET_BROKER_CLUSTER_INFO);
    return res.code === 0 && res.body.toString().includes(brokerAddr);
  } catch {
    return false;
  }
}
