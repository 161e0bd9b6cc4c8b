// A server's JSON Schema as a turnkit tool input: the dispatcher validates a call's input with a
// zod schema, so the JSON Schema is checked inside a zod refinement (with Ajv, as the MCP SDK's
// validator does), and the model is offered the server's schema unchanged. The schema comes from
// an untrusted server, so its regular expressions run on a linear-time engine (see regex.ts), and
// each schema is compiled on its own, so no schema's `$id` stands in for another's.

import { createHash } from 'node:crypto';
import type { JsonObject } from '@turnkit/core/internal';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/client';
import { Ajv, type Options } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import * as z from 'zod';
import { linearFormats, linearRegExp } from './regex.js';

export { UnsafePatternError } from './regex.js';

const OPTIONS: Options = {
  strict: false,
  validateFormats: true,
  validateSchema: false,
  allErrors: true,
  formats: linearFormats,
  code: { regExp: linearRegExp },
};

const dialects: Record<string, 'draft-07' | '2019-09' | '2020-12'> = {};
for (const scheme of ['https', 'http']) {
  dialects[`${scheme}://json-schema.org/draft/2020-12/schema`] = '2020-12';
  dialects[`${scheme}://json-schema.org/draft/2019-09/schema`] = '2019-09';
  dialects[`${scheme}://json-schema.org/draft-07/schema`] = 'draft-07';
  dialects[`${scheme}://json-schema.org/draft-06/schema`] = 'draft-07';
}

/** An Ajv engine for the schema's declared dialect (2020-12 when it declares none), as the MCP SDK picks it. */
function engineFor(schema: Record<string, unknown>): Ajv {
  const declared = schema['$schema'];
  const dialect = typeof declared === 'string' ? dialects[declared.replace(/#$/, '')] : '2020-12';
  if (dialect === undefined)
    throw new Error(
      `JSON Schema declares an unsupported dialect ("$schema": ${JSON.stringify(declared).slice(0, 200)}); supported: JSON Schema 2020-12, 2019-09, draft-07 and draft-06.`,
    );
  return dialect === '2020-12' ? new Ajv2020(OPTIONS) : dialect === '2019-09' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS);
}

/**
 * A check of values against `schema`. Throws when the schema cannot be compiled, and an
 * UnsafePatternError when one of its patterns needs a backtracking regex engine.
 */
export function compileJsonSchema<T = unknown>(schema: Record<string, unknown>): JsonSchemaValidator<T> {
  const engine = engineFor(schema);
  const validate = engine.compile(schema);
  return (input) =>
    validate(input)
      ? { valid: true, data: input as T, errorMessage: undefined }
      : { valid: false, data: undefined, errorMessage: engine.errorsText(validate.errors) };
}

/**
 * The MCP client's JSON Schema validator with the same guarantee as tool inputs: patterns and
 * formats run in linear time. The client validates each tool's structured output against the
 * tool's output schema with it. `connectMcpServers` uses it; pass it to a client you make yourself.
 *
 * @example
 * const client = new Client({ name: 'my-agent', version: '1.0.0' }, { jsonSchemaValidator: linearJsonSchemaValidator() });
 */
export function linearJsonSchemaValidator(): jsonSchemaValidator {
  return { getValidator: <T>(schema: JsonSchemaType) => compileJsonSchema<T>(schema as Record<string, unknown>) };
}

/** A zod schema that accepts exactly what `schema` accepts; throws when the schema cannot be compiled. */
export function jsonSchemaInput(schema: JsonObject): z.ZodType<JsonObject> {
  const check = compileJsonSchema<JsonObject>(schema as Record<string, unknown>);
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
