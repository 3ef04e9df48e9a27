import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createPolicyHolder } from '../../../lib/policy/holder.js';
import { memorySource } from '../../../lib/policy/source.js';
import { fileSource } from '../../../lib/policy/sources/file.js';
import type { Logger } from '../../../lib/telemetry/log.js';
import { basePolicy } from './fixtures.js';

function recordingLog() {
  const lines: Array<{ level: string; obj: object; msg?: string }> = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push({ level, obj, msg });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { log, lines };
}

async function eventually(check: () => boolean, ms = 5_000) {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('policy holder', () => {
  it('refuses to start without a valid policy: there is no last good one', async () => {
    const { log } = recordingLog();
    await expect(createPolicyHolder({ source: memorySource({ tiers: {} }), clock: systemClock, log })).rejects.toThrow(
      /invalid policy/,
    );
  });

  it('reloads a YAML file when it changes, without a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
    const path = join(dir, 'policy.yaml');
    writeFileSync(path, YAML.stringify(basePolicy()));
    const { log } = recordingLog();
    const holder = await createPolicyHolder({ source: fileSource(path), clock: systemClock, log });
    try {
      expect(holder.current().tenants.acme!.paused).toBe(false);
      const next = basePolicy();
      next.tenants.acme = { paused: true };
      writeFileSync(path, YAML.stringify(next));
      await eventually(() => holder.current().tenants.acme!.paused === true);
    } finally {
      holder.close();
    }
  });

  it('keeps the last good policy when a bad one arrives, logs it and counts it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
    const path = join(dir, 'policy.json');
    writeFileSync(path, JSON.stringify(basePolicy()));
    const { log, lines } = recordingLog();
    const rejected: string[] = [];
    const holder = await createPolicyHolder({
      source: fileSource(path),
      clock: systemClock,
      log,
      onRejected: (r) => rejected.push(r),
    });
    try {
      const before = holder.current();
      const bad = basePolicy();
      bad.defaults.accountModel.rpm = -5;
      writeFileSync(path, JSON.stringify(bad));
      await eventually(() => holder.rejections > 0);
      expect(holder.current()).toBe(before);
      expect(rejected[0]).toMatch(/defaults\.accountModel\.rpm/);
      expect(lines.some((l) => l.level === 'error' && l.msg?.includes('last good policy stays in force'))).toBe(true);
      writeFileSync(path, '{ not json');
      await eventually(() => holder.rejections > 1);
      expect(holder.current()).toBe(before);
    } finally {
      holder.close();
    }
  });

  it('saves atomically in the file’s own format', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-policy-'));
    const path = join(dir, 'policy.json');
    await fileSource(path).save(basePolicy());
    expect(JSON.parse(readFileSync(path, 'utf8')).tenants).toEqual({ acme: {}, beta: {} });
  });

  it('refreshes on a timer for sources that cannot notify (SSM)', async () => {
    const clock = new VirtualClock(0);
    let doc = basePolicy();
    const source = { name: 'poll', load: async () => structuredClone(doc), save: async () => {} };
    const { log } = recordingLog();
    const holder = await createPolicyHolder({ source, clock, log, refreshMs: 30_000 });
    doc = { ...basePolicy(), tenants: { acme: { paused: true }, beta: {} } };
    await clock.advance(29_999);
    expect(holder.current().tenants.acme!.paused).toBe(false);
    await clock.advance(1);
    expect(holder.current().tenants.acme!.paused).toBe(true);
    holder.close();
  });
});
