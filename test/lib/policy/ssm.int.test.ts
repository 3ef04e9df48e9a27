import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { describe, expect, inject, it } from 'vitest';
import { systemClock } from '../../../functions/runtime/system-clock.js';
import { createPolicyAdmin } from '../../../lib/policy/admin.js';
import { setPaused } from '../../../lib/policy/edit.js';
import { createPolicyHolder } from '../../../lib/policy/holder.js';
import { ssmSource } from '../../../lib/policy/sources/ssm.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { basePolicy } from './fixtures.js';

function client() {
  return new SSMClient({
    endpoint: inject('awsEndpoint'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

async function seed(ssm: SSMClient, path: string) {
  for (const [key, value] of Object.entries(basePolicy())) {
    await ssm.send(
      new PutParameterCommand({
        Name: `${path}/${key}`,
        Value: JSON.stringify(value),
        Type: 'String',
        Overwrite: true,
      }),
    );
  }
}

describe('policy from SSM Parameter Store (moto)', () => {
  it('assembles sections, applies a put-parameter without restart, and keeps the last good on a bad value', async () => {
    const ssm = client();
    const path = `/sluice/test-${Date.now()}/policy`;
    await seed(ssm, path);
    const rejected: string[] = [];
    const holder = await createPolicyHolder({
      source: ssmSource({ client: ssm, path, maxAgeSeconds: 0 }),
      clock: systemClock,
      log: silentLogger,
      onRejected: (r) => rejected.push(r),
    });
    try {
      expect(Object.keys(holder.current().accounts).sort()).toEqual(['b', 'rt', 'svc1']);
      // One tenant tuned by one parameter, as an operator would with `aws ssm put-parameter`.
      await ssm.send(
        new PutParameterCommand({
          Name: `${path}/tenants/acme`,
          Value: JSON.stringify({ limits: { rpm: 42 } }),
          Type: 'String',
        }),
      );
      expect(await holder.refresh()).toBe(true);
      expect(holder.current().tenants.acme!.limits).toEqual({ rpm: 42 });
      const good = holder.current();
      await ssm.send(
        new PutParameterCommand({
          Name: `${path}/tenants/acme`,
          Value: JSON.stringify({ limits: { rpm: 'lots' } }),
          Type: 'String',
          Overwrite: true,
        }),
      );
      expect(await holder.refresh()).toBe(false);
      expect(holder.current()).toBe(good);
      expect(rejected[0]).toMatch(/tenants\.acme\.limits\.rpm/);
    } finally {
      holder.close();
    }
  });

  it('saves operator edits back to SSM, folding per-entry parameters into their section', async () => {
    const ssm = client();
    const path = `/sluice/save-${Date.now()}/policy`;
    await seed(ssm, path);
    await ssm.send(
      new PutParameterCommand({
        Name: `${path}/tenants/beta`,
        Value: JSON.stringify({ limits: { rpm: 7 } }),
        Type: 'String',
      }),
    );
    const source = ssmSource({ client: ssm, path, maxAgeSeconds: 0 });
    const holder = await createPolicyHolder({ source, clock: systemClock, log: silentLogger });
    try {
      const admin = createPolicyAdmin(source, holder);
      await admin.update((raw) => setPaused(raw, { tenant: 'acme' }, true, Date.now()));
      expect(holder.current().tenants.acme!.paused).toBe(true);
      expect(holder.current().tenants.beta!.limits).toEqual({ rpm: 7 });
      // A second holder reading SSM from scratch sees the same policy.
      const fresh = await createPolicyHolder({
        source: ssmSource({ client: ssm, path, maxAgeSeconds: 0 }),
        clock: systemClock,
        log: silentLogger,
      });
      expect(fresh.current()).toEqual(holder.current());
      fresh.close();
    } finally {
      holder.close();
    }
  });
});
