/**
 * A model's observed speed: milliseconds of slot time per token, a moving
 * average over completed calls. It turns token estimates into the time a call
 * will hold its slot (lending, deadline checks, how long to Suspend).
 */

const WEIGHT = 0.1;

export class ServiceTime {
  private readonly msPerToken = new Map<string, number>();

  observe(model: string, slotMs: number, tokens: number): void {
    if (!(tokens > 0) || !(slotMs >= 0)) return;
    const sample = slotMs / tokens;
    const prev = this.msPerToken.get(model);
    this.msPerToken.set(model, prev === undefined ? sample : prev + WEIGHT * (sample - prev));
  }

  /** Expected slot time of a call of `tokens`, or undefined before the model's first completion. */
  estimateMs(model: string, tokens: number): number | undefined {
    const rate = this.msPerToken.get(model);
    return rate === undefined ? undefined : rate * tokens;
  }
}
