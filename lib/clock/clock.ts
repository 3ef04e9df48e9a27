/**
 * Time is injected everywhere under lib/ so the same code runs on the wall clock
 * (Lambda, containers, `npm start`) and on a virtual clock (tests, the scenario lab).
 */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs `fn` after `ms`; returns a function that cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** Resolves after `ms` on the given clock; rejects with the signal's reason if aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.setTimer(Math.max(0, ms), () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles as `work` does, or rejects with `onTimeout()` once `ms` pass on the clock first. */
export function withTimeout<T>(clock: Clock, work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimer(ms, () => reject(onTimeout()));
    work.then(
      (v) => {
        cancel();
        resolve(v);
      },
      (e: unknown) => {
        cancel();
        reject(e);
      },
    );
  });
}
