/**
 * Applies operator edits: read the source fresh, edit, validate, save, and make
 * the holder pick it up at once. Edits in one process run one at a time, so two
 * operators never overwrite each other's change here.
 */
import { PolicyEditError } from './edit.js';
import type { PolicyHolder } from './holder.js';
import { parsePolicy, type Policy } from './schema.js';
import type { PolicySource } from './source.js';

export interface PolicyAdmin {
  current(): Policy;
  update(edit: (raw: unknown) => unknown): Promise<Policy>;
}

export function createPolicyAdmin(source: PolicySource, holder: PolicyHolder): PolicyAdmin {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    current: () => holder.current(),
    update(edit) {
      const run = queue.then(async () => {
        const next = edit(await source.load());
        try {
          parsePolicy(next);
        } catch (error) {
          throw new PolicyEditError(error instanceof Error ? error.message : String(error));
        }
        await source.save(next);
        await holder.refresh();
        return holder.current();
      });
      queue = run.catch(() => {});
      return run;
    },
  };
}
