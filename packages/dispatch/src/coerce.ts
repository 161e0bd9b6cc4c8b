// Opt-in argument coercion guided by the tool's JSON Schema, for models that quote everything:
// `"42"` becomes 42 where the schema wants a number, `"true"` becomes true where it wants a
// boolean, and `"[1, 2]"` becomes an array where it wants an array. Only values the schema rules
// out as they are change; anything unsure (a union that allows strings, a $ref) is left alone,
// and the tool's zod schema still validates the result.

import type { JsonObject } from '@turnkit/core/internal';
import type { JsonValue } from '@turnkit/core';

const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The types a schema names (`type: 'x'` or `type: ['x', 'y']`); empty when it names none. */
function typesOf(schema: JsonObject): readonly string[] {
  const type = schema['type'];
  if (typeof type === 'string') return [type];
  return Array.isArray(type) ? type.filter((t): t is string => typeof t === 'string') : [];
}

const isObject = (value: unknown): value is JsonObject => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A string as the one scalar type the schema wants, or the string itself. */
function coerceString(text: string, types: readonly string[]): JsonValue {
  if (types.length === 0 || types.includes('string')) return text;
  const trimmed = text.trim();
  if ((types.includes('number') || types.includes('integer')) && NUMBER.test(trimmed)) {
    const n = Number(trimmed);
    if (Number.isFinite(n) && (types.includes('number') || Number.isInteger(n))) return n;
  }
  if (types.includes('boolean')) {
    const lower = trimmed.toLowerCase();
    if (lower === 'true' || lower === 'false') return lower === 'true';
  }
  if (types.includes('null') && trimmed === 'null') return null;
  if ((types.includes('object') || types.includes('array')) && /^[[{]/.test(trimmed)) {
    try {
      const parsed = JSON.parse(trimmed) as JsonValue;
      if (types.includes(Array.isArray(parsed) ? 'array' : typeof parsed === 'object' ? 'object' : '')) return parsed;
    } catch {
      // Not JSON: the schema's validation says what is wrong with it.
    }
  }
  return text;
}

/** The branch of a union to coerce with: only when no branch could take the value as it is. */
function unionBranch(schema: JsonObject, value: JsonValue): JsonObject | undefined {
  const branches = schema['anyOf'] ?? schema['oneOf'];
  if (!Array.isArray(branches)) return undefined;
  const schemas = branches.filter(isObject);
  if (typeof value === 'string' && schemas.some((b) => typesOf(b).length === 0 || typesOf(b).includes('string')))
    return undefined;
  return schemas.find((b) => typesOf(b).some((t) => t !== 'null'));
}

/**
 * `value` coerced towards `schema` (a JSON Schema as `z.toJSONSchema` writes it); what cannot be
 * coerced surely is returned unchanged. Depth is bounded by the value, which is JSON.
 */
export function coerceBySchema(value: JsonValue, schema: JsonObject): JsonValue {
  const branch = unionBranch(schema, value);
  if (branch !== undefined) return coerceBySchema(value, branch);
  const types = typesOf(schema);
  const current = typeof value === 'string' ? coerceString(value, types) : value;
  if (Array.isArray(current)) {
    const items = schema['items'];
    return isObject(items) ? current.map((item) => coerceBySchema(item, items)) : current;
  }
  if (isObject(current)) {
    const properties = isObject(schema['properties']) ? schema['properties'] : {};
    const extra = schema['additionalProperties'];
    // fromEntries defines own properties: a `__proto__` key stays a key.
    return Object.fromEntries(
      Object.entries(current).map(([key, inner]) => {
        const own = Object.hasOwn(properties, key) ? properties[key] : extra;
        return [key, isObject(own) ? coerceBySchema(inner, own) : inner];
      }),
    );
  }
  return current;
}
