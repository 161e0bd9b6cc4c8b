// The .json scenario format: a scripted model (one reply per model call) and tools with canned
// results, so a scenario can be written without code. Tool inputs are declared with JSON Schema
// and turned into zod schemas with `z.fromJSONSchema`, so the model sees the schema and the
// dispatcher validates calls against it, exactly as for a tool written in TypeScript.

import type { JsonValue, TurnLimitsInput, Usage } from '@turnkit/core';
import { defineTool, type ToolDefinition } from '@turnkit/dispatch';
import type { OutputSchema } from '@turnkit/inline';
import { call, fail, scriptedModel, text, toolCalls, type ScriptStep } from '@turnkit/testing';
import { z } from 'zod';
import { oneLine, UsageError } from './errors.js';
import type { ScenarioFile } from './scenario-file.js';
import { definedProps } from '@turnkit/core/internal';

const json: z.ZodType<JsonValue> = z.json() as z.ZodType<JsonValue>;
const jsonSchema = z.record(z.string(), json);

const usage = z.strictObject({
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  totalTokens: z.number().nonnegative().optional(),
  cost: z.number().nonnegative().optional(),
});

const scriptedCall = z.strictObject({ name: z.string().min(1), input: json.optional(), id: z.string().min(1).optional() });

const modelStep = z.union([
  z.strictObject({
    text: z.string().optional(),
    calls: z.array(scriptedCall).optional(),
    usage: usage.optional(),
    reasoning: z.string().optional(),
  }),
  z.strictObject({ error: z.string().min(1), retryable: z.boolean().optional() }),
]);

const tool = z.strictObject({
  name: z.string().min(1),
  description: z.string().default(''),
  /** JSON Schema of the input; without it any object is accepted. */
  input: jsonSchema.optional(),
  /** The output of every call (unless `results` has one for the call id). */
  result: json.optional(),
  /** Outputs by call id (`call_1`, …): resume-safe, since ids are deterministic. */
  results: z.record(z.string(), json).optional(),
  /** Every call fails with this message (an error result the model sees). */
  error: z.string().optional(),
  needsApproval: z.boolean().optional(),
  readOnly: z.boolean().optional(),
});

const budget = z.strictObject({
  maxModelCalls: z.number().optional(),
  maxToolCalls: z.number().optional(),
  maxInputTokens: z.number().optional(),
  maxOutputTokens: z.number().optional(),
  maxTotalTokens: z.number().optional(),
  maxCost: z.number().optional(),
});

const patterns = z.array(z.string()).optional();
const permissionSet = z.strictObject({ deny: patterns, allow: patterns, ask: patterns });

const file = z.strictObject({
  $schema: z.string().optional(),
  description: z.string().optional(),
  input: z.string(),
  system: z.string().optional(),
  limits: z
    .strictObject({
      maxIterations: z.number().optional(),
      loopThreshold: z.number().optional(),
      loopExemptTools: z.array(z.string()).optional(),
      maxOutputRepairs: z.number().optional(),
      budget: budget.optional(),
    })
    .optional(),
  model: z.array(modelStep).optional(),
  tools: z.array(tool).default([]),
  /** Permission rules, or layered named sets (as createDispatcher takes them). */
  permissions: z.union([permissionSet, z.array(permissionSet.extend({ name: z.string().min(1) }))]).optional(),
  /** JSON Schema the final answer must match (the text is parsed as JSON). */
  output: jsonSchema.optional(),
  /** MCP servers whose tools join `tools` (checked by @turnkit/mcp when the turn starts). */
  mcpServers: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
});

type JsonTool = z.infer<typeof tool>;

/** Reads a parsed .json scenario; throws a UsageError naming the file and the first bad field. */
export function scenarioFromJson(value: unknown, where: string): ScenarioFile {
  const parsed = file.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue === undefined || issue.path.length === 0 ? '' : ` at ${issue.path.map(String).join('.')}`;
    throw new UsageError(
      `${where} is not a valid scenario${at}: ${issue?.message ?? 'unknown problem'}. See docs/reference/cli.md for the .json scenario format.`,
    );
  }
  const spec = parsed.data;
  const tools = spec.tools.map((t, index) => toolFrom(t, `${where} tools[${index}] ('${t.name}')`));
  const output = spec.output === undefined ? undefined : schemaFrom(spec.output, `${where} output`);
  const model = spec.model?.map(stepFrom);
  return {
    input: spec.input,
    tools,
    ...(model === undefined ? {} : { model: ({ startAt }: { readonly startAt: number }) => scriptedModel(model, { startAt }) }),
    ...(spec.limits === undefined ? {} : { limits: spec.limits as TurnLimitsInput }),
    ...definedProps({ system: spec.system }),
    ...(output === undefined ? {} : { output: output as OutputSchema }),
    ...(spec.permissions === undefined ? {} : { permissions: withoutUndefined(spec.permissions) }),
    ...definedProps({ mcpServers: spec.mcpServers }),
  };
}

/** The permission sets without the keys zod leaves as undefined. */
function withoutUndefined<T extends object>(sets: T | readonly T[]): NonNullable<ScenarioFile['permissions']> {
  const clean = (set: T) => Object.fromEntries(Object.entries(set).filter(([, v]) => v !== undefined));
  return (Array.isArray(sets) ? sets.map(clean) : clean(sets as T)) as NonNullable<ScenarioFile['permissions']>;
}

function stepFrom(step: z.infer<typeof modelStep>): ScriptStep {
  if ('error' in step) {
    const error = Object.assign(new Error(step.error), step.retryable === undefined ? {} : { retryable: step.retryable });
    return fail(error);
  }
  const extras = {
    ...(step.usage === undefined ? {} : { usage: definedOnly(step.usage) }),
    ...definedProps({ reasoning: step.reasoning }),
  };
  const calls = (step.calls ?? []).map((c) => call(c.name, c.input ?? {}, c.id === undefined ? {} : { id: c.id }));
  if (calls.length === 0) return text(step.text ?? '', extras);
  return toolCalls(...calls, { ...extras, ...definedProps({ text: step.text }) });
}

/** zod types optional fields as `T | undefined`; turnkit's types want them absent instead. */
function definedOnly(given: z.infer<typeof usage>): Partial<Usage> {
  return Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as Partial<Usage>;
}

function schemaFrom(schema: Record<string, JsonValue>, where: string): z.ZodType {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    throw new UsageError(`${where} is not a JSON Schema turnkit can use (${oneLine(error)}).`);
  }
}

// any: a JSON tool's input is whatever its JSON Schema accepts.
function toolFrom(spec: JsonTool, where: string): ToolDefinition<any> {
  const input = spec.input === undefined ? z.looseObject({}) : schemaFrom(spec.input, `${where} input`);
  try {
    return defineTool({
      name: spec.name,
      description: spec.description,
      input,
      ...definedProps({ needsApproval: spec.needsApproval }),
      ...definedProps({ readOnly: spec.readOnly }),
      execute: (_input: unknown, ctx) => {
        if (spec.results !== undefined && Object.hasOwn(spec.results, ctx.callId)) return spec.results[ctx.callId];
        if (spec.error !== undefined) throw new Error(spec.error);
        if (spec.result !== undefined) return spec.result;
        throw new Error(
          `the scenario has no canned result for '${spec.name}' call ${ctx.callId}; add "result" or "results": { "${ctx.callId}": … } to the tool.`,
        );
      },
    });
  } catch (error) {
    throw new UsageError(`${where}: ${oneLine(error)}`);
  }
}
