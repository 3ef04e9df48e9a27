import type { Clock } from '../../lib/clock/clock.js';

/** The wall clock, for processes that serve real traffic. Only entry points create it. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(handle);
  },
};
