/**
 * A minimal RESP2 client for the REST server.
 *
 * Why not ioredis: a protocol proxy must hand replies back exactly as Redis sent
 * them. ioredis 6 speaks RESP3 by default and rewrites replies by command name
 * (HGETALL becomes an object, ZRANGE WITHSCORES becomes pairs), tracks MULTI,
 * SELECT and SUBSCRIBE itself, and queues or retries commands while
 * disconnected. Raw RESP2 gives the proxy the untouched reply types (status,
 * bulk, integer, nil, nested arrays, errors inside EXEC arrays), lets a
 * MULTI…EXEC block go out in one write that nothing can interleave with, and
 * fails fast while Redis is down, which is what the edge needs to observe.
 */
import net from 'node:net';

export class RespError {
  constructor(readonly message: string) {}
}

/** Bulk and status replies are both Buffers: Upstash encodes them the same way. */
export type RespValue = Buffer | number | null | RespError | RespValue[];

/** Redis could not be reached, or the connection broke before the reply. */
export class RespConnectionError extends Error {
  override readonly name = 'RespConnectionError';
}

export function encodeCommand(args: readonly (string | Buffer)[]): Buffer {
  // Arguments arrive as JSON strings: one string and one conversion per
  // command instead of three Buffers per argument.
  if (args.every((a) => typeof a === 'string')) return Buffer.from(encodeStrings(args as readonly string[]), 'utf8');
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const arg of args) {
    const b = typeof arg === 'string' ? Buffer.from(arg, 'utf8') : arg;
    parts.push(Buffer.from(`$${b.length}\r\n`), b, CRLF);
  }
  return Buffer.concat(parts);
}

function encodeStrings(args: readonly string[]): string {
  let out = `*${args.length}\r\n`;
  for (const a of args) out += `$${Buffer.byteLength(a, 'utf8')}\r\n${a}\r\n`;
  return out;
}

const CRLF = Buffer.from('\r\n');
const INCOMPLETE = Symbol('incomplete');

/** Incremental RESP2 parser; feed it chunks, it emits whole values in order. */
export class RespParser {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;

  constructor(private readonly onValue: (value: RespValue) => void) {}

  feed(chunk: Buffer): void {
    this.buf = this.pos < this.buf.length ? Buffer.concat([this.buf.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
    for (;;) {
      const start = this.pos;
      const value = this.parse();
      if (value === INCOMPLETE) {
        this.pos = start;
        return;
      }
      this.onValue(value);
    }
  }

  private line(): string | typeof INCOMPLETE {
    const end = this.buf.indexOf(CRLF, this.pos);
    if (end < 0) return INCOMPLETE;
    const text = this.buf.toString('utf8', this.pos, end);
    this.pos = end + 2;
    return text;
  }

  private parse(): RespValue | typeof INCOMPLETE {
    if (this.pos >= this.buf.length) return INCOMPLETE;
    const type = this.buf[this.pos];
    this.pos += 1;
    const line = this.line();
    if (line === INCOMPLETE) return INCOMPLETE;
    switch (type) {
      case 0x2b /* + */:
        return Buffer.from(line, 'utf8');
      case 0x2d /* - */:
        return new RespError(line);
      case 0x3a /* : */:
        return Number(line);
      case 0x24 /* $ */: {
        const len = Number.parseInt(line, 10);
        if (len < 0) return null;
        if (this.pos + len + 2 > this.buf.length) return INCOMPLETE;
        const value = Buffer.from(this.buf.subarray(this.pos, this.pos + len));
        this.pos += len + 2;
        return value;
      }
      case 0x2a /* * */: {
        const len = Number.parseInt(line, 10);
        if (len < 0) return null;
        const items: RespValue[] = [];
        for (let i = 0; i < len; i++) {
          const item = this.parse();
          if (item === INCOMPLETE) return INCOMPLETE;
          items.push(item);
        }
        return items;
      }
      default:
        throw new Error(`RESP protocol error: unexpected type byte ${type}`);
    }
  }
}

export interface RespTarget {
  readonly host: string;
  readonly port: number;
}

export function parseRedisUrl(url: string): RespTarget {
  const u = new URL(url);
  if (u.protocol !== 'redis:') throw new Error(`expected a redis:// URL, got ${url}`);
  return { host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : 6379 };
}

/**
 * One pipelined connection: replies come back in the order commands were
 * written, so a FIFO of waiters is enough. While disconnected every call
 * rejects at once (no offline queue) and the connection keeps trying to come
 * back every `reconnectMs`.
 */
export class RespConnection {
  private socket: net.Socket | undefined;
  private readonly waiters: { resolve: (v: RespValue) => void; reject: (e: Error) => void }[] = [];
  private closed = false;
  private connecting: Promise<void> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: RespTarget,
    private readonly options: { reconnectMs?: number; onPush?: (value: RespValue) => void; onClose?: () => void } = {},
  ) {}

  get ready(): boolean {
    return this.socket !== undefined && !this.connecting;
  }

  connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    if (this.socket) return Promise.resolve();
    this.connecting = new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: this.target.host, port: this.target.port });
      socket.setNoDelay(true);
      const parser = new RespParser((value) => {
        if (this.options.onPush) return this.options.onPush(value);
        const waiter = this.waiters.shift();
        if (waiter) waiter.resolve(value);
      });
      socket.on('data', (chunk) => {
        try {
          parser.feed(chunk);
        } catch (err) {
          socket.destroy(err as Error);
        }
      });
      socket.once('connect', () => {
        this.socket = socket;
        this.connecting = undefined;
        resolve();
      });
      socket.on('error', () => {
        // 'close' follows and does the cleanup.
      });
      socket.once('close', () => {
        const wasUp = this.socket === socket;
        if (wasUp) this.socket = undefined;
        else {
          this.connecting = undefined;
          reject(new RespConnectionError(`cannot connect to redis at ${this.target.host}:${this.target.port}`));
        }
        for (const w of this.waiters.splice(0)) w.reject(new RespConnectionError('redis connection lost'));
        this.options.onClose?.();
        this.scheduleReconnect();
      });
    });
    return this.connecting;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.options.onPush || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch(() => {});
    }, this.options.reconnectMs ?? 100);
    this.reconnectTimer.unref();
  }

  /** Writes all commands in one write and resolves their replies in order. */
  sendMany(commands: readonly (readonly (string | Buffer)[])[]): Promise<RespValue>[] {
    const socket = this.socket;
    if (!socket || this.closed) {
      const err = new RespConnectionError(`redis at ${this.target.host}:${this.target.port} is not reachable`);
      return commands.map(() => Promise.reject(err));
    }
    const promises = commands.map(
      () => new Promise<RespValue>((resolve, reject) => this.waiters.push({ resolve, reject })),
    );
    socket.write(
      commands.every((c) => c.every((a) => typeof a === 'string'))
        ? commands.map((c) => encodeStrings(c as readonly string[])).join('')
        : Buffer.concat(commands.map(encodeCommand)),
    );
    return promises;
  }

  send(command: readonly (string | Buffer)[]): Promise<RespValue> {
    return this.sendMany([command])[0]!;
  }

  /** For push-mode (subscriber) connections, which have no waiters. */
  write(command: readonly (string | Buffer)[]): void {
    if (!this.socket) throw new RespConnectionError('redis connection is not open');
    this.socket.write(encodeCommand(command));
  }

  close(): void {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.socket?.destroy();
    this.socket = undefined;
  }
}
