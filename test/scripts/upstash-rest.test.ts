/**
 * The REST server's pure parts: the shebang rewrite and hash mapping, and the
 * RESP2 parser fed in arbitrary chunk boundaries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeCommand, RespError, RespParser, type RespValue } from '../../scripts/upstash-rest/resp.ts';
import { ScriptRegistry, sha1, stripUpstashShebang } from '../../scripts/upstash-rest/scripts.ts';

describe('stripUpstashShebang', () => {
  it('drops the line when allow-key-locking is its only flag, keeping the newline for line numbers', () => {
    expect(stripUpstashShebang('#!lua flags=allow-key-locking\nreturn 1')).toBe('\nreturn 1');
    expect(stripUpstashShebang('#!lua flags=allow-key-locking')).toBe('');
  });

  it('keeps the flags stock Redis knows', () => {
    expect(stripUpstashShebang('#!lua flags=no-writes,allow-key-locking\nreturn 1')).toBe(
      '#!lua flags=no-writes\nreturn 1',
    );
    expect(stripUpstashShebang('#!lua name=lib flags=allow-key-locking,allow-stale\nx')).toBe(
      '#!lua name=lib flags=allow-stale\nx',
    );
  });

  it('leaves every other script untouched', () => {
    for (const s of [
      'return 1',
      '#!lua flags=no-writes\nreturn 1',
      '#!lua\nreturn 1',
      '-- #!lua flags=allow-key-locking\nreturn 1',
    ]) {
      expect(stripUpstashShebang(s)).toBe(s);
    }
  });
});

describe('ScriptRegistry', () => {
  it('maps the hash of the text the client holds to the hash of the text Redis runs', () => {
    const registry = new ScriptRegistry();
    const original = '#!lua flags=allow-key-locking\nreturn 1';
    expect(registry.resolve(sha1(original))).toBe(sha1(original));
    const { text, originalSha } = registry.register(original);
    expect(originalSha).toBe(sha1(original));
    expect(registry.resolve(sha1(original))).toBe(sha1(text));
    expect(registry.resolve(sha1(original).toUpperCase())).toBe(sha1(text));
    registry.register('return 2');
    expect(registry.resolve(sha1('return 2'))).toBe(sha1('return 2'));
  });
});

describe('RespParser', () => {
  const wire = Buffer.from(
    '+OK\r\n-ERR boom\r\n:42\r\n$5\r\nh\r\nl\xff\r\n$-1\r\n*-1\r\n*0\r\n*3\r\n:1\r\n*2\r\n$1\r\na\r\n-E x\r\n$0\r\n\r\n',
    'latin1',
  );
  const expected: RespValue[] = [
    Buffer.from('OK'),
    new RespError('ERR boom'),
    42,
    Buffer.from('h\r\nl\xff', 'latin1'),
    null,
    null,
    [],
    [1, [Buffer.from('a'), new RespError('E x')], Buffer.alloc(0)],
  ];

  it('parses every RESP2 type, binary-safe, in one chunk', () => {
    const out: RespValue[] = [];
    new RespParser((v) => out.push(v)).feed(wire);
    expect(out).toEqual(expected);
  });

  it('gives the same values whatever the chunk boundaries', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: wire.length }), { maxLength: 12 }), (cuts) => {
        const points = [...new Set(cuts)].sort((a, b) => a - b);
        const out: RespValue[] = [];
        const parser = new RespParser((v) => out.push(v));
        let from = 0;
        for (const p of [...points, wire.length]) {
          parser.feed(wire.subarray(from, p));
          from = p;
        }
        expect(out).toEqual(expected);
      }),
    );
  });

  it('encodes commands as arrays of bulk strings', () => {
    expect(encodeCommand(['SET', 'k', 'é']).toString('utf8')).toBe('*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\né\r\n');
  });
});
