/** A dispatcher on in-memory parts, calling a simulated GPU in process: what dispatcher tests run against. */
import type { GpuSim } from '../../../functions/gpu-sim/app.js';
import type { VirtualClock } from '../../../lib/clock/virtual-clock.js';
import { createDispatcher, type DispatcherOptions } from '../../../lib/dispatch/dispatcher.js';
import type { DispatchEvent } from '../../../lib/dispatch-events.js';
import type { Policy } from '../../../lib/policy/schema.js';
import { createEmbeddedResults } from '../../../lib/results/embedded.js';
import { createEmbeddedStore } from '../../../lib/store/embedded.js';
import { silentLogger } from '../../../lib/telemetry/log.js';
import { createInProcessUpstream } from '../../../lib/upstream/in-process.js';

export function dispatcherOnSim(o: {
  clock: VirtualClock;
  gpu: GpuSim;
  policy: Policy;
  onEvent?: (event: DispatchEvent) => void;
  options?: DispatcherOptions;
}) {
  const events: DispatchEvent[] = [];
  let n = 0;
  const dispatch = createDispatcher({
    clock: o.clock,
    store: createEmbeddedStore(o.clock),
    results: createEmbeddedResults({ clock: o.clock }),
    upstream: createInProcessUpstream({ fetch: o.gpu.app.fetch, clock: o.clock }),
    policy: () => o.policy,
    log: silentLogger,
    newId: () => `lease-${n++}`,
    onEvent: (e) => {
      events.push(e);
      o.onEvent?.(e);
    },
    ...(o.options ? { options: o.options } : {}),
  });
  return { dispatch, events };
}
