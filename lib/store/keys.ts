/**
 * Every shared-state key is built here and nowhere else. Keys of one tenant share
 * the `{t:<tenant>}` hash tag so an admission script touching several of them could
 * run on one Redis Cluster slot. Components are URI-encoded so no tenant, account
 * or model name can forge another key.
 */
import type { Unit } from './types.js';

const PREFIX = 'sluice';
const part = (s: string) => encodeURIComponent(s);
const tenantTag = (tenant: string) => `{t:${part(tenant)}}`;

export type WindowScope =
  | { readonly kind: 'account-model'; readonly tenant: string; readonly account: string; readonly model: string }
  | { readonly kind: 'tenant-model'; readonly tenant: string; readonly model: string }
  | { readonly kind: 'tenant'; readonly tenant: string };

export function windowKey(scope: WindowScope, unit: Unit, windowMs: number): string {
  const base = `${PREFIX}:${tenantTag(scope.tenant)}:fw:${windowMs}:${unit}`;
  switch (scope.kind) {
    case 'account-model':
      return `${base}:a:${part(scope.account)}:m:${part(scope.model)}`;
    case 'tenant-model':
      return `${base}:m:${part(scope.model)}`;
    case 'tenant':
      return `${base}:all`;
  }
}

export function reservoirKey(tenant: string, liteTopic: string): string {
  return `${PREFIX}:${tenantTag(tenant)}:res:${part(liteTopic)}`;
}

/**
 * A reservoir place as one string: the reservoir's key and the member holding the
 * place. Key components are URI-encoded, so the last '#' is the separator. It
 * travels in the envelope's `reservoirKey` so every side can give the place back.
 */
export function reservoirPlace(key: string, member: string): string {
  return `${key}#${part(member)}`;
}

/** The key and member of a place; undefined for anything else (a bare key from an older envelope). */
export function parseReservoirPlace(place: string): { readonly key: string; readonly member: string } | undefined {
  const at = place.lastIndexOf('#');
  if (at <= 0 || at === place.length - 1) return undefined;
  try {
    return { key: place.slice(0, at), member: decodeURIComponent(place.slice(at + 1)) };
  } catch {
    return undefined;
  }
}

export function paceKey(tenant: string, liteTopic: string): string {
  return `${PREFIX}:${tenantTag(tenant)}:pace:${part(liteTopic)}`;
}

/** Capacity gates are per model, shared by all tenants: their own slot. */
export function slotGateKey(model: string): string {
  return `${PREFIX}:{gate:${part(model)}}:slots`;
}

/**
 * A physical LiteTopic's return from a send-back (lib/limits/send-back.ts); LiteTopic names
 * are the broker's, unique per parent topic. In its model's slot, beside the tier's return
 * schedule, as one script reads both.
 */
export function liteTopicReturnKey(model: string, liteTopic: string): string {
  return `${PREFIX}:{gate:${part(model)}}:return:${part(liteTopic)}`;
}

/** A tier's schedule of returns from send-backs on a model, shared by every dispatcher. */
export function returnScheduleKey(model: string, tier: string): string {
  return `${PREFIX}:{gate:${part(model)}}:returns:${part(tier)}`;
}

/**
 * The starts per second a backlogged flow of a tier can count on from a model, as each
 * dispatcher reports it for the edge (lib/limits/fair-share.ts); in the model's slot.
 */
export function fairShareKey(model: string, tier: string): string {
  return `${PREFIX}:{gate:${part(model)}}:share:${part(tier)}`;
}

export function resultKey(id: string): string {
  return `${PREFIX}:result:${part(id)}`;
}

/** A request's attempt record (lib/store/attempts.ts); its own slot, like results. */
export function attemptKey(id: string): string {
  return `${PREFIX}:attempt:${part(id)}`;
}
