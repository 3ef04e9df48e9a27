import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// lib/ runs in Lambda, containers, one process and under a virtual clock: clock,
// timers and configuration are passed in, never read from the ambient process.
const FORBIDDEN = [
  /\bDate\.now\s*\(/,
  /\bnew Date\s*\(\s*\)/,
  /\bperformance\.now\s*\(/,
  /\bprocess\.env\b/,
  /(?<![.\w])setTimeout\s*\(/,
  /(?<![.\w])setInterval\s*\(/,
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('lib/ reads no clock, timer or environment of its own', () => {
  it('has no Date.now, new Date(), performance.now, setTimeout, setInterval or process.env', () => {
    const offences = files('lib').flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          !/^\s*(\/\/|\*)/.test(line) && FORBIDDEN.some((re) => re.test(line))
            ? [`${file}:${i + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(offences).toEqual([]);
  });
});
