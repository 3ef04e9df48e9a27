/**
 * Validators for the component schemas of the pinned OpenAI OpenAPI extract
 * (test/fixtures/openai-openapi/components.json, see its `source`). The document is
 * OpenAPI 3.1 but still marks many fields `nullable: true` in the 3.0 way; each such
 * marker becomes `anyOf: [schema, {type: 'null'}]` so Ajv (JSON Schema 2020-12) accepts
 * null exactly where the document does and nowhere else.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';

interface Fixture {
  readonly source: { readonly repository: string; readonly path: string; readonly commit: string };
  readonly schemas: Record<string, unknown>;
}

export const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/openai-openapi/components.json', import.meta.url), 'utf8'),
) as Fixture;

/**
 * `nullable` honoured, `#/components/schemas/X` pointed at `#/$defs/X`, and the one
 * 2019-09 recursion (`$recursiveRef: "#"`) pointed at the schema `self` it sits in.
 */
export function toJsonSchema(value: unknown, self: string): unknown {
  if (Array.isArray(value)) return value.map((v) => toJsonSchema(v, self));
  if (value === null || typeof value !== 'object') return value;
  const { nullable, $recursiveAnchor: _anchor, ...rest } = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(rest)) {
    if (k === '$ref' && typeof v === 'string') out[k] = v.replace('#/components/schemas/', '#/$defs/');
    else if (k === '$recursiveRef' && v === '#') out.$ref = `#/$defs/${self}`;
    else if (k === 'properties' && v !== null && typeof v === 'object') {
      out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toJsonSchema(s, self)]));
    } else out[k] = toJsonSchema(v, self);
  }
  if (nullable !== true) return out;
  const { default: fallback, ...schema } = out;
  return { anyOf: [schema, { type: 'null' }], ...(fallback === undefined ? {} : { default: fallback }) };
}

// Formats ("unixtime", "int64"...) are the document's own labels, not JSON Schema formats.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const defs = Object.fromEntries(
  Object.entries(fixture.schemas).map(([name, schema]) => [name, toJsonSchema(schema, name)]),
);
ajv.addSchema({ $id: 'openai', $defs: defs });

const compiled = new Map<string, ValidateFunction>();

/** A validator for one component schema, e.g. `CreateChatCompletionResponse`. */
export function validator(name: string): ValidateFunction {
  if (!Object.hasOwn(fixture.schemas, name)) throw new Error(`${name} is not in the pinned extract`);
  let v = compiled.get(name);
  if (!v) compiled.set(name, (v = ajv.compile({ $ref: `openai#/$defs/${name}` })));
  return v;
}

/** The schema's errors for `value`, as short lines; empty when it conforms. */
export function violations(name: string, value: unknown): string[] {
  const v = validator(name);
  if (v(value)) return [];
  return (v.errors ?? []).map(
    (e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}
