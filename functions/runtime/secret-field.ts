/**
 * One string field of a JSON secret in Secrets Manager (the shapes are in contract.ts,
 * SECRET_FIELDS). A missing or short value fails the cold start with the secret's name,
 * rather than leaving a route open or a check that nothing can pass.
 */
import { getSecret } from '@aws-lambda-powertools/parameters/secrets';

export async function secretField(id: string, field: string): Promise<string> {
  const secret = (await getSecret(id, { transform: 'json', maxAge: 300 })) as Record<string, unknown> | undefined;
  const value =
    secret !== null && typeof secret === 'object' && Object.hasOwn(secret, field) ? secret[field] : undefined;
  if (typeof value !== 'string' || value.length < 16)
    throw new Error(`secret ${id} must hold JSON {"${field}": <at least 16 characters>}`);
  return value;
}
