/**
 * Regenerates test/fixtures/openai-openapi/components.json, the pinned extract of the
 * official OpenAI OpenAPI document that the contract tests validate against: the
 * component schemas named in ROOTS and every schema they reference, without prose
 * (descriptions, examples, vendor `x-` annotations), which validation never reads.
 *
 *   npx tsx test/support/openai-spec-extract.ts <openapi.yaml> <commit>
 *
 * where openapi.yaml is `openapi.yaml` of github.com/openai/openai-openapi at <commit>.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

export const ROOTS = [
  'CreateChatCompletionRequest',
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'CreateCompletionRequest',
  'CreateCompletionResponse',
  'CreateEmbeddingRequest',
  'CreateEmbeddingResponse',
  'ListModelsResponse',
  'Model',
  'ErrorResponse',
  'CreateResponse',
  'Response',
  'ResponseStreamEvent',
];

const PROSE = new Set(['description', 'example', 'examples', 'summary']);

function strip(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strip);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (PROSE.has(k) || k.startsWith('x-')) continue;
    // The keys of `properties` are field names (a field may well be called "description").
    out[k] =
      k === 'properties' && v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([f, s]) => [f, strip(s)]))
        : strip(v);
  }
  return out;
}

function main(path: string, commit: string) {
  const doc = parse(readFileSync(path, 'utf8')) as {
    openapi: string;
    info: { version: string };
    components: { schemas: Record<string, unknown> };
  };
  const all = doc.components.schemas;
  const picked = new Map<string, unknown>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== 'object') return;
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') add(v.replace('#/components/schemas/', ''));
      else visit(v);
    }
  };
  const add = (name: string) => {
    if (picked.has(name)) return;
    if (!Object.hasOwn(all, name)) throw new Error(`schema ${name} is not in the document`);
    picked.set(name, all[name]);
    visit(all[name]);
  };
  ROOTS.forEach(add);
  const schemas = Object.fromEntries([...picked.keys()].sort().map((name) => [name, strip(picked.get(name))]));
  const fixture = {
    source: {
      repository: 'https://github.com/openai/openai-openapi',
      path: 'openapi.yaml',
      commit,
      openapi: doc.openapi,
      apiVersion: doc.info.version,
      extract: `components.schemas reachable from ${ROOTS.join(', ')}; prose removed by test/support/openai-spec-extract.ts`,
    },
    schemas,
  };
  writeFileSync(
    new URL('../fixtures/openai-openapi/components.json', import.meta.url),
    `${JSON.stringify(fixture, null, 1)}\n`,
  );
  console.log(`${picked.size} schemas`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!))
  main(process.argv[2]!, process.argv[3]!);
