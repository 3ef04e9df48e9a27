import type { Readable } from 'node:stream';

/** Calls `onLine` with each complete line a process writes. */
export function eachLine(stream: Readable, onLine: (line: string) => void): void {
  let buf = '';
  stream.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}
