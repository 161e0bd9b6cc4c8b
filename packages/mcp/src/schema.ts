// A server's JSON Schema as a turnkit tool input: the dispatcher validates a call's input with a
// zod schema, so the JSON Schema is checked inside a zod refinement (with the JSON Schema
// validator the MCP SDK ships), and the model is offered the server's schema unchanged.

import { createHash } from 'node:crypto';
import type { JsonObject } from '@turnkit/core';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv';
import * as z from 'zod';

let validators: AjvJsonSchemaValidator | undefined;

/** A zod schema that accepts exactly what `schema` accepts; throws when the schema cannot be compiled. */
export function jsonSchemaInput(schema: JsonObject): z.ZodType<JsonObject> {
  validators ??= new AjvJsonSchemaValidator();
  const check = validators.getValidator<JsonObject>(schema as Record<string, unknown>);
  return z.custom<JsonObject>().superRefine((value, ctx) => {
    const result = check(value);
    if (!result.valid) ctx.addIssue({ code: 'custom', message: result.errorMessage, input: value });
  });
}

/** JSON with object keys sorted, so equal schemas hash the same whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** sha256 of what a tool promises: its input schema and its annotations. */
export function toolFingerprint(inputSchema: unknown, annotations: unknown): string {
  return createHash('sha256')
    .update(canonical({ inputSchema, annotations: annotations ?? null }))
    .digest('hex');
}
