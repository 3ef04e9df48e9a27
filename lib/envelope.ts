import { z } from 'zod';
import { findTooDeep, TooDeepError } from './json-depth.js';

/** How the client waits for its answer. */
export const ReplyMode = z.enum(['sync', 'stream', 'async']);
export type ReplyMode = z.infer<typeof ReplyMode>;

/** The OpenAI-compatible operation the request targets upstream. */
export const Operation = z.enum(['chat.completions', 'completions', 'embeddings', 'responses']);
export type Operation = z.infer<typeof Operation>;

/**
 * What travels through the LiteTopic from the edge to a dispatcher. Everything a
 * dispatcher needs is in it, so any dispatcher can serve any message.
 */
export const Envelope = z.object({
  id: z.string(),
  account: z.string(),
  tenant: z.string(),
  tier: z.string(),
  model: z.string(),
  liteTopic: z.string(),
  operation: Operation,
  /** The client's request body, as parsed JSON. */
  body: z.record(z.string(), z.unknown()),
  mode: ReplyMode,
  enqueuedAt: z.number(),
  /** Past this instant (ms since epoch) the request is answered `expired` instead of served. */
  deadline: z.number(),
  tokenEstimate: z.number().int().nonnegative(),
  /**
   * Of tokenEstimate, the prompt's: the dispatcher times prompt and output apart. Absent
   * from messages an older edge enqueued: all of it then counts as output, the slower kind.
   */
  promptEstimate: z.number().int().nonnegative().optional(),
  /** Token windows charged at admission, so the dispatcher can reconcile them. */
  charged: z.array(z.object({ key: z.string(), windowStart: z.number() })),
  reservoirKey: z.string().optional(),
  /** Multiplier of the LiteTopic's pace set at admission (degrade tiers over their soft quota). */
  paceFactor: z.number().positive().max(1).default(1),
});
export type Envelope = z.infer<typeof Envelope>;

/**
 * Deepest client body an envelope carries. The edge refuses deeper bodies before
 * admission (its own limit is lower); this guard keeps the encoder from ever
 * overflowing the stack, whoever calls it.
 */
export const MAX_ENVELOPE_BODY_DEPTH = 1000;

export function encodeEnvelope(envelope: Envelope): string {
  const tooDeep = findTooDeep(envelope.body, MAX_ENVELOPE_BODY_DEPTH);
  if (tooDeep) throw new TooDeepError(MAX_ENVELOPE_BODY_DEPTH, tooDeep.path);
  return JSON.stringify(envelope);
}

export function decodeEnvelope(raw: string): Envelope {
  return Envelope.parse(JSON.parse(raw));
}
