import { randomUUID } from 'node:crypto';

/** Request ids: opaque, unguessable (they are the key to an async result). */
export const newRequestId = (): string => `req_${randomUUID().replaceAll('-', '')}`;
export const newLeaseId = (): string => randomUUID();
