/**
 * The `sluice` operator command: limits, booked bursts, pause and resume. It edits
 * the policy where it lives — the local policy file, or SSM Parameter Store in
 * AWS — with the same validated edits as the admin API, so a running Sluice picks
 * the change up without a restart.
 */
import { parseArgs } from 'node:util';
import { SSMClient } from '@aws-sdk/client-ssm';
import {
  addReservation,
  cancelReservation,
  PolicyEditError,
  setLimits,
  setPaused,
  type LimitsTarget,
} from '../../lib/policy/edit.js';
import { resolveLimits } from '../../lib/policy/resolve.js';
import { own } from '../../lib/lookup.js';
import { parsePolicy, type Limits } from '../../lib/policy/schema.js';
import type { PolicySource } from '../../lib/policy/source.js';
import { fileSource } from '../../lib/policy/sources/file.js';
import { ssmSource } from '../../lib/policy/sources/ssm.js';
import { SQSClient } from '@aws-sdk/client-sqs';
import { systemClock } from '../runtime/system-clock.js';
import { traceCommand } from './trace.js';
import { decodeEnvelope, encodeEnvelope } from '../../lib/envelope.js';
import { RocketMQLiteQueue } from '../../lib/queue/rocketmq/index.js';
import { SqsDeadLetterQueue, type DeadLetterRecord } from '../../lib/queue/sqs/index.js';

export const USAGE = `usage: sluice [--file policy.yaml | --ssm-path /sluice/<stage>/policy [--region R] [--endpoint-url URL]] <command>

  limits get  --account A --model M          limits in force for an account on a model
  limits get  --tenant T                     a tenant's own settings
  limits set  (--defaults | --tenant T [--model M] | --account A | --model M)
              [--rpm N] [--tpm N] [--rate N] [--burst N] [--reservoir N]
  reserve add --tenant T [--model M] --from TIME --to TIME [--rpm N] [--tpm N] [--reservoir N] [--id ID] [--note TEXT]
  reserve list [--tenant T]
  reserve cancel ID
  pause  (--tenant T | --account A)
  resume (--tenant T | --account A)

  trace ID    [--url URL] [--admin-key KEY]  one request's timeline through an edge's admin API
              ($SLUICE_URL, $SLUICE_ADMIN_KEY)

  dlq list    [--reason TEXT] [--max N]      requests that failed for good, with their reasons
  dlq redrive --rocketmq host:port [--reason TEXT]
                                             send them back to their LiteTopics with a fresh deadline

TIME is ISO 8601 (2026-12-01T09:00:00Z) or +30m / +2h from now.
The policy source defaults to $SLUICE_POLICY_FILE or $SLUICE_SSM_PATH. dlq commands use
--dlq-url ($SLUICE_DLQ_URL), --sqs-endpoint ($SLUICE_SQS_ENDPOINT), --rocketmq ($SLUICE_ROCKETMQ_ENDPOINTS),
--topic (sluice-requests) and --group (sluice-dispatchers).`;

export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly now: () => number;
  readonly env: Record<string, string | undefined>;
  /** Tests pass their own SSM client (e.g. pointed at moto). */
  readonly ssmClient?: (options: { region?: string; endpoint?: string }) => SSMClient;
}

class UsageError extends Error {}

function number(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageError(`--${flag} needs a number, got "${value}"`);
  return n;
}

function time(value: string | undefined, flag: string, now: number): number {
  if (!value) throw new UsageError(`--${flag} is required`);
  const rel = /^\+(\d+)([smhd])$/.exec(value);
  if (rel)
    return now + Number(rel[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[rel[2] as 's' | 'm' | 'h' | 'd'];
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw new UsageError(`--${flag}: "${value}" is not an ISO time or +N[smhd]`);
  return t;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        file: { type: 'string' },
        'ssm-path': { type: 'string' },
        region: { type: 'string' },
        'endpoint-url': { type: 'string' },
        tenant: { type: 'string' },
        account: { type: 'string' },
        model: { type: 'string' },
        defaults: { type: 'boolean' },
        rpm: { type: 'string' },
        tpm: { type: 'string' },
        rate: { type: 'string' },
        burst: { type: 'string' },
        reservoir: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        id: { type: 'string' },
        note: { type: 'string' },
        'dlq-url': { type: 'string' },
        'sqs-endpoint': { type: 'string' },
        rocketmq: { type: 'string' },
        topic: { type: 'string' },
        group: { type: 'string' },
        reason: { type: 'string' },
        max: { type: 'string' },
        url: { type: 'string' },
        'admin-key': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: v, positionals } = parsed;
  if (v.help || positionals.length === 0) {
    io.out(USAGE);
    return v.help ? 0 : 2;
  }

  try {
    if (positionals[0] === 'dlq') return await deadLetters(positionals[1], v, io);
    if (positionals[0] === 'trace') return await traceCommand(positionals[1], v, io);
    const source = pickSource(v, io);
    const [command, sub, arg] = positionals;
    const edit = async (change: (raw: unknown) => unknown, done: string) => {
      const next = change(await source.load());
      parsePolicy(next);
      await source.save(next);
      io.out(done);
    };
    const who = (): { tenant: string } | { account: string } => {
      if (v.tenant && !v.account) return { tenant: v.tenant };
      if (v.account && !v.tenant) return { account: v.account };
      throw new UsageError('give exactly one of --tenant or --account');
    };

    switch (`${command}${sub && command !== 'pause' && command !== 'resume' ? ` ${sub}` : ''}`) {
      case 'limits get': {
        const policy = parsePolicy(await source.load());
        if (v.account) {
          const account = own(policy.accounts, v.account);
          if (!account) throw new PolicyEditError(`unknown account "${v.account}"`, 404);
          if (!v.model) throw new UsageError('--model is required with --account');
          io.out(
            JSON.stringify({ account: v.account, model: v.model, ...resolveLimits(policy, account, v.model) }, null, 2),
          );
        } else if (v.tenant) {
          const tenant = own(policy.tenants, v.tenant);
          if (!tenant) throw new PolicyEditError(`unknown tenant "${v.tenant}"`, 404);
          io.out(JSON.stringify({ tenant: v.tenant, ...tenant }, null, 2));
        } else {
          io.out(JSON.stringify(policy.defaults, null, 2));
        }
        return 0;
      }
      case 'limits set': {
        const target: LimitsTarget = v.defaults
          ? { level: 'defaults' }
          : v.tenant
            ? { level: 'tenant', tenant: v.tenant, model: v.model }
            : v.account
              ? { level: 'account', account: v.account }
              : v.model
                ? { level: 'model', model: v.model }
                : (() => {
                    throw new UsageError('say where: --defaults, --tenant, --account or --model');
                  })();
        const limits = Object.fromEntries(
          (['rpm', 'tpm', 'rate', 'burst', 'reservoir'] as const).flatMap((k) =>
            v[k] === undefined ? [] : [[k, number(v[k], k)]],
          ),
        ) as Limits;
        if (Object.keys(limits).length === 0)
          throw new UsageError('give at least one of --rpm --tpm --rate --burst --reservoir');
        await edit(
          (raw) => setLimits(raw, target, limits),
          `set ${JSON.stringify(limits)} on ${JSON.stringify(target)}`,
        );
        return 0;
      }
      case 'reserve add': {
        if (!v.tenant) throw new UsageError('--tenant is required');
        const now = io.now();
        const booking = {
          id: v.id ?? `rsv-${now.toString(36)}`,
          tenant: v.tenant,
          ...(v.model ? { model: v.model } : {}),
          startsAt: time(v.from, 'from', now),
          endsAt: time(v.to, 'to', now),
          extra: {
            rpm: number(v.rpm, 'rpm') ?? 0,
            tpm: number(v.tpm, 'tpm') ?? 0,
            reservoir: number(v.reservoir, 'reservoir') ?? 0,
          },
          ...(v.note ? { note: v.note } : {}),
        };
        await edit(
          (raw) => addReservation(raw, booking, now),
          `booked ${booking.id}: ${new Date(booking.startsAt).toISOString()} to ${new Date(booking.endsAt).toISOString()}`,
        );
        return 0;
      }
      case 'reserve list': {
        const policy = parsePolicy(await source.load());
        const now = io.now();
        const rows = policy.reservations.filter((r) => !v.tenant || r.tenant === v.tenant);
        if (rows.length === 0) io.out('no bookings');
        for (const r of rows) {
          const state = now < r.startsAt ? 'upcoming' : now < r.endsAt ? 'active' : 'ended';
          io.out(
            `${r.id}\t${r.tenant}\t${r.model ?? '*'}\t${new Date(r.startsAt).toISOString()}\t${new Date(r.endsAt).toISOString()}\t+${r.extra.rpm} rpm +${r.extra.tpm} tpm +${r.extra.reservoir} queued\t${state}${r.note ? `\t${r.note}` : ''}`,
          );
        }
        return 0;
      }
      case 'reserve cancel': {
        if (!arg) throw new UsageError('reserve cancel needs the booking id');
        await edit((raw) => cancelReservation(raw, arg), `cancelled ${arg}`);
        return 0;
      }
      case 'pause':
      case 'resume': {
        const target = who();
        await edit(
          (raw) => setPaused(raw, target, command === 'pause', io.now()),
          `${command === 'pause' ? 'paused' : 'resumed'} ${JSON.stringify(target)}`,
        );
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`sluice: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}

async function deadLetters(
  sub: string | undefined,
  v: {
    'dlq-url'?: string;
    'sqs-endpoint'?: string;
    region?: string;
    rocketmq?: string;
    topic?: string;
    group?: string;
    reason?: string;
    max?: string;
  },
  io: CliIo,
): Promise<number> {
  const queueUrl = v['dlq-url'] ?? io.env.SLUICE_DLQ_URL;
  if (!queueUrl) throw new UsageError('no dead-letter queue: pass --dlq-url (or set SLUICE_DLQ_URL)');
  const sqs = new SQSClient({
    region: v.region ?? io.env.AWS_REGION ?? 'us-east-1',
    endpoint: v['sqs-endpoint'] ?? io.env.SLUICE_SQS_ENDPOINT,
  });
  const dlq = new SqsDeadLetterQueue({ sqs, queueUrl });
  const matches = (r: DeadLetterRecord) => !v.reason || r.reason.includes(v.reason);
  try {
    if (sub === 'list') {
      const rows = (await dlq.list(number(v.max, 'max') ?? 100)).filter(matches);
      if (rows.length === 0) io.out('no dead letters');
      for (const r of rows) io.out(`${r.id}\t${r.liteTopic}\t${envelopeId(r.body)}\t${r.reason}`);
      return 0;
    }
    if (sub === 'redrive') {
      const endpoints = v.rocketmq ?? io.env.SLUICE_ROCKETMQ_ENDPOINTS;
      if (!endpoints) throw new UsageError('dlq redrive needs --rocketmq host:port (or SLUICE_ROCKETMQ_ENDPOINTS)');
      const target = new RocketMQLiteQueue({
        endpoints,
        parentTopic: v.topic ?? 'sluice-requests',
        consumerGroup: v.group ?? 'sluice-dispatchers',
        clock: systemClock,
        onDeadLetter: () => undefined,
      });
      try {
        const moved = await dlq.redrive(target, matches, (r) => freshEnvelope(r.body, io.now()));
        io.out(`redrove ${moved} dead letter${moved === 1 ? '' : 's'}`);
      } finally {
        await target.close();
      }
      return 0;
    }
    throw new UsageError(`unknown command "dlq ${sub ?? ''}"`);
  } finally {
    sqs.destroy();
  }
}

function envelopeId(body: string): string {
  try {
    return decodeEnvelope(body).id;
  } catch {
    return '(not an envelope)';
  }
}

/**
 * A redriven request waits its tier's whole allowance again, and holds no reservoir
 * place: its place was given back when it failed.
 */
function freshEnvelope(body: string, now: number): string {
  try {
    const e = decodeEnvelope(body);
    return encodeEnvelope({
      ...e,
      enqueuedAt: now,
      deadline: now + Math.max(0, e.deadline - e.enqueuedAt),
      reservoirKey: undefined,
    });
  } catch {
    return body;
  }
}

function pickSource(
  v: { file?: string; 'ssm-path'?: string; region?: string; 'endpoint-url'?: string },
  io: CliIo,
): PolicySource {
  const file = v.file ?? (v['ssm-path'] ? undefined : io.env.SLUICE_POLICY_FILE);
  const ssmPath = v['ssm-path'] ?? (file ? undefined : io.env.SLUICE_SSM_PATH);
  if (file) return fileSource(file);
  if (ssmPath) {
    const options = { region: v.region ?? io.env.AWS_REGION, endpoint: v['endpoint-url'] };
    const client = io.ssmClient?.(options) ?? new SSMClient(options);
    return ssmSource({ client, path: ssmPath, maxAgeSeconds: 0 });
  }
  throw new UsageError('no policy source: pass --file or --ssm-path (or set SLUICE_POLICY_FILE / SLUICE_SSM_PATH)');
}
