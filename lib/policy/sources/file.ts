/**
 * A policy file, YAML or JSON (YAML is a superset, so one parser reads both).
 * Saved atomically (write a temporary file, then rename) so a reader never sees
 * half a policy; watched so edits apply without a restart.
 */
import { watch as fsWatch } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import YAML from 'yaml';
import type { PolicySource } from '../source.js';

export function fileSource(path: string): PolicySource {
  const json = path.endsWith('.json');
  return {
    name: `file:${path}`,
    async load() {
      return YAML.parse(await readFile(path, 'utf8'));
    },
    async save(policy) {
      const tmp = join(dirname(path), `.${basename(path)}.${randomUUID()}.tmp`);
      await writeFile(tmp, json ? `${JSON.stringify(policy, null, 2)}\n` : YAML.stringify(policy));
      await rename(tmp, path);
    },
    watch(onChange) {
      // Editors replace files by rename, which ends a watch on the file itself: watch the folder.
      const watcher = fsWatch(dirname(path), (_event, file) => {
        if (file === null || file === basename(path)) onChange();
      });
      return () => watcher.close();
    },
  };
}
