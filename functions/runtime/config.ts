/**
 * Process configuration, read from the environment once, at the entry point.
 * lib/ never sees process.env: it gets the parsed values.
 */
import { z } from 'zod';

const Config = z.object({
  SLUICE_STAGE: z.string().default('local'),
  SLUICE_LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
  /** The policy as JSON (small deployments and tests). */
  SLUICE_POLICY_JSON: z.string().optional(),
  /** Request bodies larger than this are refused with 413. */
  SLUICE_BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(1024 * 1024),
  SLUICE_DISPATCH_CONCURRENCY: z.coerce.number().int().positive().default(64),
});
export type Config = z.infer<typeof Config>;

export function readConfig(env: Record<string, string | undefined>): Config {
  const parsed = Config.safeParse(env);
  if (!parsed.success) {
    throw new Error(`invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n  ')}`);
  }
  return parsed.data;
}
