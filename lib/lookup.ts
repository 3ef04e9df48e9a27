/**
 * Identifiers from clients and operators (model, tenant, account, tier names) are
 * hostile: `constructor`, `toString` or `__proto__` must read as "no such entry",
 * never as a member of Object.prototype. Look them up here, never by plain index.
 */
export function own<T>(record: Readonly<Record<string, T>> | undefined | null, key: string): T | undefined {
  return record != null && typeof record === 'object' && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** A copy of `record` without a prototype, so even a plain index finds own entries only. */
export function bare<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, record);
}
