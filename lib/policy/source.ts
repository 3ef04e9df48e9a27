/**
 * Where a policy lives: a local file, SSM Parameter Store, or memory. A source
 * reads and writes the raw document; validation happens once, in the holder.
 */
export interface PolicySource {
  /** Names the source in logs, e.g. "file:/etc/sluice/policy.yaml". */
  readonly name: string;
  load(): Promise<unknown>;
  save(policy: unknown): Promise<void>;
  /** Calls back when the source may have changed; returns a function that stops watching. */
  watch?(onChange: () => void): () => void;
}

export function memorySource(initial: unknown): PolicySource {
  let doc = structuredClone(initial);
  const listeners = new Set<() => void>();
  return {
    name: 'memory',
    async load() {
      return structuredClone(doc);
    },
    async save(policy) {
      doc = structuredClone(policy);
      for (const l of listeners) l();
    },
    watch(onChange) {
      listeners.add(onChange);
      return () => listeners.delete(onChange);
    },
  };
}
