import { describe, expect, it } from 'vitest';
import { cpuPerRequest, parseProcStat, startCpuWindow } from '../../bench/lib/cpu.js';

describe('parseProcStat', () => {
  it('takes the all-cores line: busy is everything but idle and iowait', () => {
    const text = 'cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 50 2 25 400 10 1 1 0 0 0\nintr 1 2 3\n';
    expect(parseProcStat(text)).toEqual({ busy: 160, total: 980 });
  });

  it('says nothing rather than guess when the line is missing or garbled', () => {
    expect(parseProcStat('intr 1 2 3\n')).toBeUndefined();
    expect(parseProcStat('cpu  1 2 x 4\n')).toBeUndefined();
  });
});

describe('cpuPerRequest', () => {
  it('divides this process and the rest of the machine by the requests served', () => {
    // 10 s on 2 cores, the machine busy 15 s of CPU, 5 s of it this process, 1,000 served.
    expect(cpuPerRequest({ wallMs: 10_000, processMs: 5_000, machineBusyMs: 15_000, cores: 2 }, 1_000)).toEqual({
      processMs: 5,
      elsewhereMs: 10,
      machineBusy: 0.75,
    });
  });

  it('leaves the machine out where it could not be read, and has no figure for nothing served', () => {
    expect(cpuPerRequest({ wallMs: 10_000, processMs: 5_000, cores: 2 }, 1_000)).toEqual({ processMs: 5 });
    expect(cpuPerRequest({ wallMs: 10_000, processMs: 5_000, cores: 2 }, 0)).toBeUndefined();
  });

  it('measures a real window: burning CPU here shows in this process', () => {
    const end = startCpuWindow();
    const until = performance.now() + 50;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    const w = end();
    expect(x).toBeGreaterThan(0);
    expect(w.processMs).toBeGreaterThan(20);
    expect(w.wallMs).toBeGreaterThanOrEqual(50);
  });
});
