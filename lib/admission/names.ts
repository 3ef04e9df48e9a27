/**
 * The name of one limit window, e.g. `account-model:tokens`. The same string names the
 * policy in `RateLimit-Policy` / `RateLimit` and the refusal in `x-sluice-reason`, so a
 * client can match a 429 to the policy it broke.
 */
export function limitName(scope: string, unit: string): string {
  return `${scope}:${unit}`;
}
