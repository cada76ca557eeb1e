import { z } from 'zod';

/**
 * A judge's zod schema as a JSON schema that OpenAI's strict structured outputs accept (the strictest
 * subset most compatible servers share): every property required (an optional one becomes nullable),
 * `additionalProperties: false` on every object, no `$schema`, `default`, `format`, `pattern`, length or
 * numeric bounds (the bounds move into the description; zod still enforces them on the reply).
 * Property order is kept, so the reasoning field stays first and the model reasons before its verdict.
 */
export type JsonSchema = Record<string, unknown>;

/** Keywords that go through unchanged; anything else that is not handled below is an error. */
const KEEP = new Set(['type', 'enum', 'const', 'description', '$ref']);
/** Constraints strict mode may not accept: dropped, and said in words in the description instead. */
const SAY = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern', 'format', 'multipleOf'];
/** Annotations with no meaning for the reply. */
const DROP = new Set(['$schema', '$id', 'title', 'default', 'examples', 'readOnly', 'writeOnly', 'deprecated', 'propertyNames']);

export function strictJsonSchema(schema: z.ZodType, name = 'verdict'): JsonSchema {
  const raw = z.toJSONSchema(schema) as JsonSchema;
  if (raw.type !== 'object') throw new SchemaError(name, 'its root is not an object (structured outputs need one)');
  return convert(raw, name, '(root)');
}

export class SchemaError extends Error {
  constructor(judge: string, why: string) {
    super(`the ${judge} judge's schema cannot be sent as a strict structured output: ${why}`);
  }
}

function convert(node: JsonSchema, judge: string, at: string): JsonSchema {
  const out: JsonSchema = {};
  const said: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (KEEP.has(key)) out[key] = value;
    else if (DROP.has(key)) continue;
    else if (SAY.includes(key)) {
      if (!isSafeIntegerBound(key, value)) said.push(`${key} ${JSON.stringify(value)}`);
    }
    else if (key === 'properties') {
      const props = value as Record<string, JsonSchema>;
      const required = new Set((node.required as string[] | undefined) ?? []);
      out.properties = Object.fromEntries(
        Object.entries(props).map(([k, v]) => {
          const child = convert(v, judge, `${at}.${k}`);
          return [k, required.has(k) ? child : nullable(child)];
        }),
      );
      out.required = Object.keys(props);
    } else if (key === 'required') continue; // rebuilt with the properties
    else if (key === 'additionalProperties') {
      if (value !== false) throw new SchemaError(judge, `${at} is a record with free keys; name its keys`);
    } else if (key === 'items') {
      if (typeof value !== 'object' || value === null) throw new SchemaError(judge, `${at} is a tuple; use an object`);
      out.items = convert(value as JsonSchema, judge, `${at}[]`);
    } else if (key === 'anyOf' || key === 'oneOf') {
      out.anyOf = (value as JsonSchema[]).map((v, i) => convert(v, judge, `${at}|${i}`));
    } else if (key === '$defs' || key === 'definitions') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, JsonSchema>).map(([k, v]) => [k, convert(v, judge, `$defs.${k}`)]));
    } else {
      throw new SchemaError(judge, `${at} uses "${key}", which strict mode does not support`);
    }
  }
  if (out.type === 'object') {
    out.properties ??= {};
    out.required ??= [];
    out.additionalProperties = false;
  }
  if (said.length) out.description = [out.description, `(${said.join(', ')})`].filter(Boolean).join(' ');
  return out;
}

/** zod's implicit bounds of `.int()`: they say nothing the type does not. */
function isSafeIntegerBound(key: string, value: unknown): boolean {
  return (key === 'minimum' || key === 'maximum') && typeof value === 'number' && Math.abs(value) >= Number.MAX_SAFE_INTEGER;
}

function nullable(node: JsonSchema): JsonSchema {
  const { type } = node;
  if (typeof type === 'string' && node.enum === undefined && node.const === undefined) return { ...node, type: [type, 'null'] };
  return { anyOf: [node, { type: 'null' }] };
}

/**
 * An optional field is sent as required-but-nullable, so a model answers `null` where zod wants the key
 * absent: drop those nulls before validating. Walks the zod-made JSON schema beside the value.
 */
export function dropOptionalNulls(value: unknown, schema: z.ZodType): unknown {
  const root = plain.get(schema) ?? (z.toJSONSchema(schema) as JsonSchema);
  plain.set(schema, root);
  const walk = (v: unknown, node: JsonSchema | undefined): unknown => {
    if (node && typeof node.$ref === 'string') node = resolve(root, node.$ref);
    if (!node) return v;
    if (Array.isArray(v)) return node.items && typeof node.items === 'object' ? v.map((x) => walk(x, node.items as JsonSchema)) : v;
    if (!v || typeof v !== 'object' || !node.properties) return v;
    const props = node.properties as Record<string, JsonSchema>;
    const required = new Set((node.required as string[] | undefined) ?? []);
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (x === null && k in props && !required.has(k)) continue;
      out[k] = walk(x, props[k]);
    }
    return out;
  };
  return walk(value, root);
}

const plain = new WeakMap<z.ZodType, JsonSchema>();

/** `#` or `#/$defs/Name` (the references zod writes). */
function resolve(root: JsonSchema, ref: string): JsonSchema | undefined {
  if (ref === '#') return root;
  const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
  return m ? ((root[m[1]!] as Record<string, JsonSchema> | undefined)?.[m[2]!]) : undefined;
}
