/**
 * Booked bursts. A booking takes part of a model's declared capacity for a window
 * of time; it fits only while every moment of that window stays within the model's
 * bookable share, counting the other bookings that overlap it.
 */
import type { Policy, Reservation } from './schema.js';
import { own } from '../lookup.js';

export type BookingCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export function checkBooking(policy: Policy, booking: Reservation, now: number): BookingCheck {
  if (!own(policy.tenants, booking.tenant)) return { ok: false, reason: `unknown tenant "${booking.tenant}"` };
  if (booking.endsAt <= now) return { ok: false, reason: 'the window has already ended' };
  if (policy.reservations.some((r) => r.id === booking.id))
    return { ok: false, reason: `a booking with id "${booking.id}" exists` };
  const models = booking.model ? [booking.model] : Object.keys(policy.models);
  for (const name of models) {
    const model = own(policy.models, name);
    if (!model) return { ok: false, reason: `unknown model "${name}"` };
    if (booking.extra.tpm === 0) continue;
    if (model.tokensPerSecond === undefined) {
      return {
        ok: false,
        reason: `model "${name}" declares no tokensPerSecond, so no booking can be checked against its capacity`,
      };
    }
    const capacity = model.tokensPerSecond * 60 * model.bookableShare;
    const peak = peakBookedTpm(policy.reservations, name, booking) + booking.extra.tpm;
    if (peak > capacity) {
      return {
        ok: false,
        reason: `model "${name}" can take ${Math.floor(capacity)} booked tokens per minute; with the bookings that overlap this window it would need ${peak}`,
      };
    }
  }
  return { ok: true };
}

/** The largest sum of extra tpm that overlapping bookings hold on a model at any moment of `window`. */
function peakBookedTpm(reservations: readonly Reservation[], model: string, window: Reservation): number {
  const overlapping = reservations.filter(
    (r) => (r.model === undefined || r.model === model) && r.startsAt < window.endsAt && r.endsAt > window.startsAt,
  );
  // The sum only changes at a booking's start, so checking every start inside the window is enough.
  const instants = [window.startsAt, ...overlapping.map((r) => r.startsAt).filter((t) => t > window.startsAt)];
  let peak = 0;
  for (const t of instants) {
    const sum = overlapping.filter((r) => r.startsAt <= t && r.endsAt > t).reduce((s, r) => s + r.extra.tpm, 0);
    peak = Math.max(peak, sum);
  }
  return peak;
}

export function activeReservations(policy: Policy, tenant: string, model: string, now: number): Reservation[] {
  return policy.reservations.filter(
    (r) => r.tenant === tenant && (r.model === undefined || r.model === model) && r.startsAt <= now && now < r.endsAt,
  );
}
