/**
 * `sluice trace <id>`: one request's timeline, read through any edge's admin API
 * (`--url`, $SLUICE_URL; `--admin-key`, $SLUICE_ADMIN_KEY), one line per step.
 */
export interface TraceIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Record<string, string | undefined>;
  readonly fetch?: typeof fetch;
}

interface Step {
  readonly at: number;
  readonly by: string;
  readonly step: string;
  readonly [detail: string]: unknown;
}

/** What a step says beyond its name, in a few words. */
export function describeStep(s: Step): string {
  type Window = { scope: string; unit: string; limit: number; remaining: number };
  const windows = Array.isArray(s.windows)
    ? (s.windows as Window[]).map((w) => `${w.scope}/${w.unit} ${w.remaining}/${w.limit} left`).join(', ')
    : '';
  switch (s.step) {
    case 'admitted':
      return (
        `tenant ${s.tenant}, account ${s.account}, ${s.tier}, ${s.model} -> ${s.liteTopic ?? '?'}` +
        `${windows ? `; windows: ${windows}` : ''}${s.warning ? `; ${s.warning}` : ''}`
      );
    case 'refused':
      return `${s.reason}${windows ? `; windows: ${windows}` : ''}`;
    case 'suspended':
      return `Suspend ${s.ms} ms (${s.cause === 'capacity' ? 'waiting for a GPU slot' : s.cause})`;
    case 'started':
      return `upstream call after ${s.queueWaitMs} ms in ${s.liteTopic}, ${s.slotWaitMs ?? 0} ms of it waiting for a GPU slot`;
    case 'completed':
      return `answered ${s.status} after ${s.totalMs} ms in all`;
    case 'retrying':
      return `attempt ${s.attempt}: ${s.reason}`;
    case 'failed':
      return `failed ${s.status}: ${s.reason}`;
    default:
      return '';
  }
}

export async function traceCommand(
  id: string | undefined,
  flags: { url?: string; 'admin-key'?: string },
  io: TraceIo,
): Promise<number> {
  const base = flags.url ?? io.env.SLUICE_URL;
  const key = flags['admin-key'] ?? io.env.SLUICE_ADMIN_KEY;
  if (!id || !base || !key) {
    io.err('usage: sluice trace <request id> --url http://edge --admin-key KEY (or $SLUICE_URL, $SLUICE_ADMIN_KEY)');
    return 2;
  }
  const response = await (io.fetch ?? fetch)(
    `${base.replace(/\/+$/, '')}/admin/v1/requests/${encodeURIComponent(id)}/trace`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  const body = (await response.json().catch(() => ({}))) as { steps?: Step[]; error?: { message?: string } };
  if (!response.ok || !Array.isArray(body.steps)) {
    io.err(`no trace: ${body.error?.message ?? `HTTP ${response.status}`}`);
    return 1;
  }
  const t0 = body.steps[0]?.at ?? 0;
  io.out(`request ${id}`);
  for (const s of body.steps)
    io.out(`  +${String(s.at - t0).padStart(6)} ms  ${s.step.padEnd(9)}  ${describeStep(s)}  [${s.by}]`);
  return 0;
}
