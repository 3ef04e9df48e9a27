/**
 * Operator edits of a policy document, shared by the admin API and the `sluice`
 * command: each takes the raw document and returns the edited one, which the
 * caller validates (parsePolicy) before saving. Refusals throw PolicyEditError.
 */
import { checkBooking } from './reservations.js';
import { own } from '../lookup.js';
import { PAUSES_KEPT, parsePolicy, Reservation, type Limits, type Policy, type PolicyInput } from './schema.js';

export class PolicyEditError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
    this.name = 'PolicyEditError';
  }
}

export type LimitsTarget =
  | { readonly level: 'defaults' }
  | { readonly level: 'tenant'; readonly tenant: string; readonly model?: string }
  | { readonly level: 'account'; readonly account: string }
  | { readonly level: 'model'; readonly model: string };

type Doc = PolicyInput & Record<string, unknown>;

function clone(doc: unknown): Doc {
  return structuredClone(doc) as Doc;
}

export function setLimits(raw: unknown, target: LimitsTarget, limits: Limits): Doc {
  const doc = clone(raw);
  const merge = (current: Limits | undefined) => ({ ...current, ...limits });
  switch (target.level) {
    case 'defaults':
      doc.defaults = { ...doc.defaults, accountModel: { ...doc.defaults.accountModel, ...limits } };
      break;
    case 'tenant': {
      const tenant = own(doc.tenants, target.tenant);
      if (!tenant) throw new PolicyEditError(`unknown tenant "${target.tenant}"`, 404);
      if (target.model !== undefined && !own(doc.models, target.model))
        throw new PolicyEditError(`unknown model "${target.model}"`, 404);
      if (target.model) tenant.models = { ...tenant.models, [target.model]: merge(own(tenant.models, target.model)) };
      else tenant.limits = merge(tenant.limits);
      break;
    }
    case 'account': {
      const account = own(doc.accounts, target.account);
      if (!account) throw new PolicyEditError(`unknown account "${target.account}"`, 404);
      account.limits = merge(account.limits);
      break;
    }
    case 'model': {
      const model = own(doc.models, target.model);
      if (!model) throw new PolicyEditError(`unknown model "${target.model}"`, 404);
      model.limits = merge(model.limits);
      break;
    }
  }
  return doc;
}

/** Pauses or resumes, recording when: the dispatcher does not count paused time against a request's wait. */
export function setPaused(
  raw: unknown,
  who: { readonly tenant: string } | { readonly account: string },
  paused: boolean,
  now: number,
): Doc {
  const doc = clone(raw);
  const entry = 'tenant' in who ? own(doc.tenants, who.tenant) : own(doc.accounts, who.account);
  if (!entry)
    throw new PolicyEditError(
      'tenant' in who ? `unknown tenant "${who.tenant}"` : `unknown account "${who.account}"`,
      404,
    );
  if (paused && !entry.paused) {
    entry.pausedAt = now;
  } else if (!paused && entry.paused) {
    const from = entry.pausedAt ?? now;
    entry.pauses = [...(entry.pauses ?? []), { from, to: Math.max(from, now) }].slice(-PAUSES_KEPT);
    delete entry.pausedAt;
  }
  entry.paused = paused;
  return doc;
}

/** Adds a booking if it fits the model's capacity next to the others; refuses with the reason otherwise. */
export function addReservation(raw: unknown, booking: unknown, now: number): Doc {
  const parsed = Reservation.safeParse(booking);
  if (!parsed.success)
    throw new PolicyEditError(
      `invalid booking: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  const policy: Policy = parsePolicy(raw);
  const check = checkBooking(policy, parsed.data, now);
  if (!check.ok) throw new PolicyEditError(`booking refused: ${check.reason}`, 409);
  const doc = clone(raw);
  doc.reservations = [...(doc.reservations ?? []), parsed.data];
  return doc;
}

export function cancelReservation(raw: unknown, id: string): Doc {
  const doc = clone(raw);
  const before = doc.reservations?.length ?? 0;
  doc.reservations = (doc.reservations ?? []).filter((r) => r.id !== id);
  if (doc.reservations.length === before) throw new PolicyEditError(`no booking with id "${id}"`, 404);
  return doc;
}
