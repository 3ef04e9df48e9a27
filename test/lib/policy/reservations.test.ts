import { describe, expect, it } from 'vitest';
import { addReservation, cancelReservation, PolicyEditError, setLimits, setPaused } from '../../../lib/policy/edit.js';
import { activeReservations, checkBooking } from '../../../lib/policy/reservations.js';
import { parsePolicy } from '../../../lib/policy/schema.js';
import { basePolicy } from './fixtures.js';

const HOUR = 3_600_000;
// m sustains 1000 tokens/s; half of it is bookable: 30,000 tokens per minute.
const booking = (id: string, startsAt: number, endsAt: number, tpm: number) => ({
  id,
  tenant: 'acme',
  model: 'm',
  startsAt,
  endsAt,
  extra: { rpm: 100, tpm, reservoir: 500 },
});

describe('booked bursts', () => {
  it('books a window that fits the model capacity', () => {
    const doc = addReservation(basePolicy(), booking('r1', HOUR, 2 * HOUR, 20_000), 0);
    expect(parsePolicy(doc).reservations.map((r) => r.id)).toEqual(['r1']);
  });

  it('refuses a booking that overlaps others beyond the bookable capacity, with the reason', () => {
    const doc = addReservation(basePolicy(), booking('r1', HOUR, 3 * HOUR, 20_000), 0);
    expect(() => addReservation(doc, booking('r2', 2 * HOUR, 4 * HOUR, 20_000), 0)).toThrow(
      /can take 30000 booked tokens per minute; .* would need 40000/,
    );
    // Back to back is fine: the windows do not overlap.
    expect(() => addReservation(doc, booking('r3', 3 * HOUR, 4 * HOUR, 20_000), 0)).not.toThrow();
  });

  it('counts only the overlapping moment, not every booking in the window', () => {
    let doc = addReservation(basePolicy(), booking('a', 0, 10, 15_000), 0);
    doc = addReservation(doc, booking('b', 20, 30, 15_000), 0);
    // c overlaps a and b, but never both at once: 15k + 15k fits.
    expect(() => addReservation(doc, booking('c', 5, 25, 15_000), 0)).not.toThrow();
  });

  it('refuses bookings in the past, for unknown tenants or models, and without declared capacity', () => {
    expect(() => addReservation(basePolicy(), booking('old', 0, 10, 1), 100)).toThrow(/already ended/);
    expect(() => addReservation(basePolicy(), { ...booking('x', HOUR, 2 * HOUR, 1), tenant: 'ghost' }, 0)).toThrow(
      /unknown tenant/,
    );
    expect(() => addReservation(basePolicy(), { ...booking('x', HOUR, 2 * HOUR, 1), model: 'nope' }, 0)).toThrow(
      /unknown model/,
    );
    const p = basePolicy();
    delete p.models.m!.tokensPerSecond;
    expect(() => addReservation(p, booking('x', HOUR, 2 * HOUR, 1), 0)).toThrow(/declares no tokensPerSecond/);
    expect(() => addReservation(basePolicy(), { ...booking('x', HOUR, 2 * HOUR, 1), endsAt: HOUR - 1 }, 0)).toThrow(
      /endsAt must be after startsAt/,
    );
  });

  it('is active only inside its window and for its tenant and model', () => {
    const p = parsePolicy(addReservation(basePolicy(), booking('r1', HOUR, 2 * HOUR, 1_000), 0));
    expect(activeReservations(p, 'acme', 'm', HOUR - 1)).toHaveLength(0);
    expect(activeReservations(p, 'acme', 'm', HOUR)).toHaveLength(1);
    expect(activeReservations(p, 'beta', 'm', HOUR)).toHaveLength(0);
    expect(activeReservations(p, 'acme', 'm', 2 * HOUR)).toHaveLength(0);
  });

  it('cancels by id, and says when there is none', () => {
    const doc = addReservation(basePolicy(), booking('r1', HOUR, 2 * HOUR, 1_000), 0);
    expect(parsePolicy(cancelReservation(doc, 'r1')).reservations).toEqual([]);
    expect(() => cancelReservation(doc, 'r9')).toThrow(PolicyEditError);
  });
});

describe('policy edits', () => {
  it('sets limits at each level and pauses tenants and accounts', () => {
    let doc: unknown = setLimits(basePolicy(), { level: 'tenant', tenant: 'acme' }, { rpm: 50 });
    doc = setLimits(doc, { level: 'tenant', tenant: 'acme', model: 'm' }, { tpm: 500 });
    doc = setLimits(doc, { level: 'account', account: 'svc1' }, { rate: 2 });
    doc = setPaused(doc, { tenant: 'beta' }, true, 1_000);
    const p = parsePolicy(doc);
    expect(p.tenants.acme!.limits).toEqual({ rpm: 50 });
    expect(p.tenants.acme!.models.m).toEqual({ tpm: 500 });
    expect(p.accounts.svc1!.limits).toEqual({ rate: 2 });
    expect(p.tenants.beta!.paused).toBe(true);
    expect(() => setPaused(basePolicy(), { account: 'ghost' }, true, 1_000)).toThrow(/unknown account/);
  });
});
