import { sleep, type Clock } from '../../lib/clock/clock.js';
import type { GpuSimConfig } from './options.js';
import { naturalLength, outputTokens, tokensForChars } from './text.js';

export interface Plan {
  promptTokens: number;
  tokens: string[];
  finishReason: 'stop' | 'length';
}

/** What the model will say: decided up front from the prompt, so streaming and not agree. */
export function plan(
  config: GpuSimConfig,
  promptKey: string,
  promptChars: number,
  maxTokens: number | null | undefined,
): Plan {
  const natural = naturalLength(promptKey, config.minOutputTokens, config.maxOutputTokens);
  const cap = maxTokens ?? config.defaultMaxTokens;
  const count = Math.min(natural, cap);
  return {
    promptTokens: tokensForChars(promptChars),
    tokens: outputTokens(promptKey, count),
    finishReason: natural > cap ? 'length' : 'stop',
  };
}

export interface Load {
  /** Slots in use right now, this request's included. */
  busy(): number;
  slots: number;
  /** Extra multiplier from fault injection. */
  slowdown(): number;
}

/**
 * How much slower each step is with `busy` of `slots` sequences sharing the GPU: decode
 * is memory-bandwidth bound, so a fuller batch stretches every sequence's step time.
 */
export function contention(config: GpuSimConfig, load: Load): number {
  return (1 + (config.contentionFactor * load.busy()) / load.slots) * load.slowdown();
}

export function prefillMs(config: GpuSimConfig, promptTokens: number): number {
  return (promptTokens / 1000) * config.prefillMsPerKToken;
}

/**
 * Yields the plan's tokens in groups of `decodeStepTokens`, each group at the moment the
 * GPU would finish its last token. Step time is re-read from the current load before
 * every group, so a request slows down when others join the batch and speeds up when
 * they leave. Deadlines are absolute so timer lateness on the wall clock does not
 * accumulate.
 */
export async function* decode(
  clock: Clock,
  config: GpuSimConfig,
  load: Load,
  p: Plan,
  signal: AbortSignal,
): AsyncGenerator<string, void, void> {
  let due = clock.now() + prefillMs(config, p.promptTokens) * contention(config, load);
  await sleep(clock, due - clock.now(), signal);
  const step = config.decodeStepTokens;
  for (let i = 0; i < p.tokens.length; i += step) {
    const group = p.tokens.slice(i, i + step);
    due += group.length * config.baseTokenMs * contention(config, load);
    await sleep(clock, due - clock.now(), signal);
    yield group.join('');
  }
}
