import { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createGpuSim, type GpuSim, type GpuSimOptions } from '../../../functions/gpu-sim/app.js';

export interface Lab {
  clock: VirtualClock;
  sim: GpuSim;
}

/** A simulator on a virtual clock, so latency tests measure the model, not the machine. */
export function lab(options: Omit<GpuSimOptions, 'clock'> = {}): Lab {
  const clock = new VirtualClock(1_700_000_000_000);
  return { clock, sim: createGpuSim({ clock, ...options }) };
}

export function chatBody(content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'sim-llm', messages: [{ role: 'user', content }], ...extra };
}

export function post(sim: GpuSim, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return Promise.resolve(
    sim.app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal,
    }),
  );
}

export interface Timed {
  res: Response;
  /** Virtual time at which the response (headers, and for JSON the whole body) was ready. */
  at: number;
  /** The order in which responses completed, starting at 0. */
  order: number;
}

/** Tracks when and in which order responses arrive on the virtual clock. */
export function tracker(clock: VirtualClock) {
  let n = 0;
  return (p: Promise<Response>): Promise<Timed> => p.then((res) => ({ res, at: clock.now(), order: n++ }));
}

export interface Sse {
  /** `data:` payloads in order, with the virtual time each was read. */
  events: { data: string; at: number }[];
}

/** Reads an SSE body to the end while the caller drives the clock. */
export async function readSse(clock: VirtualClock, res: Response): Promise<Sse> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: Sse['events'] = [];
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      events.push({ data, at: clock.now() });
    }
  }
  return { events };
}

/** Runs the virtual clock far enough for everything pending to finish. */
export async function drain(clock: VirtualClock, ms = 600_000): Promise<void> {
  await clock.advance(ms);
}
