/**
 * CPU spent over a measured window: by this process, and by the whole machine (Linux
 * /proc/stat), so a bench can say how much of a request's cost sits outside the process
 * (a broker's JVMs on the same box) and whether the box was saturated. Where /proc/stat
 * cannot be read, the machine figures are absent rather than guessed.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export interface CpuWindow {
  readonly wallMs: number;
  /** CPU time of this process (user + system). */
  readonly processMs: number;
  /** Busy CPU time of every core together (everything but idle and iowait); absent off Linux. */
  readonly machineBusyMs?: number;
  readonly cores: number;
}

/** Busy and total jiffies of the `cpu` line (all cores), or undefined when it cannot be read. */
export function parseProcStat(text: string): { busy: number; total: number } | undefined {
  const line = text.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) return undefined;
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  if (f.length < 4 || f.some((x) => !Number.isFinite(x))) return undefined;
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = f[3]! + (f[4] ?? 0);
  return { busy: total - idle, total };
}

function readProcStat(): { busy: number; total: number } | undefined {
  try {
    return parseProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return undefined;
  }
}

/** Starts a window; the returned function ends it. `now` in milliseconds. */
export function startCpuWindow(now: () => number = () => performance.now()): () => CpuWindow {
  const t0 = now();
  const p0 = process.cpuUsage();
  const s0 = readProcStat();
  const cores = availableParallelism();
  return () => {
    const wallMs = now() - t0;
    const p = process.cpuUsage(p0);
    const s1 = readProcStat();
    const out: CpuWindow = { wallMs, processMs: (p.user + p.system) / 1000, cores };
    if (!s0 || !s1 || s1.total <= s0.total) return out;
    // Jiffies of all cores: the busy fraction of their sum, times wall time and cores.
    const busyShare = (s1.busy - s0.busy) / (s1.total - s0.total);
    return { ...out, machineBusyMs: busyShare * wallMs * cores };
  };
}

export interface CpuPerRequest {
  /** Milliseconds of CPU per served request in this process. */
  readonly processMs: number;
  /** Milliseconds of CPU per served request everywhere else on the machine. */
  readonly elsewhereMs?: number;
  /** Of all cores, the share busy over the window (1: saturated). */
  readonly machineBusy?: number;
}

export function cpuPerRequest(w: CpuWindow, served: number): CpuPerRequest | undefined {
  if (served <= 0 || w.wallMs <= 0) return undefined;
  const round = (x: number) => Math.round(x * 100) / 100;
  const out: CpuPerRequest = { processMs: round(w.processMs / served) };
  if (w.machineBusyMs === undefined) return out;
  return {
    ...out,
    elsewhereMs: round(Math.max(0, w.machineBusyMs - w.processMs) / served),
    machineBusy: Math.round((w.machineBusyMs / (w.wallMs * w.cores)) * 1000) / 1000,
  };
}
