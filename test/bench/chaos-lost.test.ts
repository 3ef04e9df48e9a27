import { describe, expect, it } from 'vitest';
import { placeOf } from '../../bench/chaos/lost.js';

describe('chaos bench: where a lost request is', () => {
  it('places it by its result record and the log lines that name it', () => {
    expect(placeOf('completed', [])).toBe('answered after the settle deadline (completed)');
    expect(placeOf('none', ['edge: envelope spilled to SQS'])).toBe(
      'still in the SQS spillover (spilled, never redriven)',
    );
    expect(
      placeOf('queued', ['edge: envelope spilled to SQS', 'd1: redriven from the spillover into the broker']),
    ).toBe('redriven into the broker, never delivered');
    expect(placeOf('none', [])).toBe('sent to the broker by the edge, never delivered');
    expect(placeOf('queued', ['d2: result store unavailable; message waits'])).toBe(
      'delivered to a dispatcher, unanswered (last: d2: result store unavailable; message waits)',
    );
  });
});
