/**
 * Congestion control per model, AIMD as in TCP: an upstream that answers 429/503
 * or slower than the model's latency target halves the model's pace (at most once
 * per cool-down, so one burst of errors is one signal); each healthy answer adds a
 * little back. Other models are untouched. State is per dispatcher process, as TCP's
 * is per connection: every dispatcher backs off on its own evidence.
 */
import type { Clock } from '../clock/clock.js';

export interface CongestionOptions {
  readonly clock: Clock;
  /** Multiplier on congestion (default 0.5). */
  readonly decrease?: number;
  /** Added back per healthy answer (default 0.05). */
  readonly increase?: number;
  /** Lowest pace multiplier (default 1/32). */
  readonly floor?: number;
  /** Least time between two decreases of one model (default 1 s). */
  readonly coolDownMs?: number;
  readonly onChange?: (model: string, factor: number) => void;
}

export interface Congestion {
  /** Current pace multiplier of the model, in (0, 1]. */
  factor(model: string): number;
  /** Feeds one upstream outcome. */
  observe(
    model: string,
    outcome: { readonly status: number; readonly latencyMs: number; readonly latencyTargetMs?: number },
  ): void;
}

export function createCongestion(options: CongestionOptions): Congestion {
  const decrease = options.decrease ?? 0.5;
  const increase = options.increase ?? 0.05;
  const floor = options.floor ?? 1 / 32;
  const coolDownMs = options.coolDownMs ?? 1_000;
  const state = new Map<string, { factor: number; lastDecrease: number }>();

  function set(model: string, factor: number, lastDecrease: number) {
    const previous = state.get(model)?.factor ?? 1;
    if (factor >= 1) state.delete(model);
    else state.set(model, { factor, lastDecrease });
    if (factor !== previous) options.onChange?.(model, Math.min(1, factor));
  }

  return {
    factor: (model) => state.get(model)?.factor ?? 1,
    observe(model, { status, latencyMs, latencyTargetMs }) {
      const now = options.clock.now();
      const current = state.get(model) ?? { factor: 1, lastDecrease: -Infinity };
      const congested =
        status === 429 || status === 503 || (latencyTargetMs !== undefined && latencyMs > latencyTargetMs);
      if (congested) {
        if (now - current.lastDecrease >= coolDownMs) set(model, Math.max(floor, current.factor * decrease), now);
      } else if (status < 500 && current.factor < 1) {
        set(model, Math.min(1, current.factor + increase), current.lastDecrease);
      }
    },
  };
}
