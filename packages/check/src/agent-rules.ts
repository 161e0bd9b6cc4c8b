// The agent's side of `checkAgent`'s alphabet: which calls a model may make (each tool with the
// inputs its rules distinguish) and what the dispatcher does with each one. The decision is the
// real one: the agent's configuration checked by the dispatcher (`resolveConfig`), the facts as
// the dispatcher gathers them (`factsWithPolicy`: rules, the tool's `needsApproval`) and `decide`.
// Hooks and the policy function are code: they enter as the answers they can give, each answer a
// branch of the exploration.

import type { JsonValue } from '@turnkit/core';
import { decide } from '@turnkit/dispatch';
import {
  globMatch,
  factsWithPolicy,
  resolveConfig,
  validateInput,
  type DispatcherConfig,
  type PolicyFact,
} from '@turnkit/dispatch/internal';
import { agentDispatcherOptions, type CheckedAgent } from './agent-types.js';

/** What the before-hooks can answer for a call (one answer for the whole chain). */
export type HookAnswer =
  | { readonly kind: 'continue' }
  | { readonly kind: 'approve' }
  | { readonly kind: 'halt' }
  | { readonly kind: 'rewrite'; readonly input: JsonValue };

/** What the policy function can answer: no opinion, or a verdict. */
export type PolicyAnswer =
  | { readonly kind: 'none' }
  | { readonly kind: 'allow' }
  | { readonly kind: 'ask' }
  | { readonly kind: 'deny' };

/** A call the model may make: a tool and one input its rules distinguish. */
export interface CallChoice {
  /** The called tool. */
  readonly tool: string;
  /** As the model sends it. */
  readonly input: JsonValue;
  /** Why this input: `base`, `matches <pattern>`, `matches no rule`, `given`. */
  readonly why: string;
}

/** What the dispatcher does with one call under one answer of the hooks and the policy. */
export type CallVerdict =
  | { readonly kind: 'run'; readonly input: JsonValue; readonly source: string }
  | { readonly kind: 'deny'; readonly source: string; readonly reason: string }
  | { readonly kind: 'park'; readonly input: JsonValue; readonly source: string; readonly reason: string };

/** An input of a tool that its schema refused, so the exploration leaves it out. */
export interface SkippedInput {
  /** The tool. */
  readonly tool: string;
  /** The input that was left out. */
  readonly input: JsonValue;
  /** Why this input was chosen (as `CallChoice.why`). */
  readonly why: string;
  /** What the tool's schema says against it. */
  readonly problem: string;
}

export interface AgentRules {
  readonly config: DispatcherConfig;
  readonly choices: readonly CallChoice[];
  readonly skipped: readonly SkippedInput[];
  /** The distinct verdicts a call can get, one per answer of the hooks and the policy that differs. */
  verdicts(tool: string, input: JsonValue): readonly VerdictUnder[];
}

/** A verdict and the answers it was reached under (for the counterexample's comments). */
export interface VerdictUnder {
  readonly verdict: CallVerdict;
  readonly hook: HookAnswer;
  readonly policy: PolicyAnswer;
}

export interface RulesOptions {
  /** Inputs to try per tool, over the derived ones (the first is also the base the derived ones start from). */
  readonly inputs?: { readonly [tool: string]: readonly JsonValue[] };
  /** Default: continue, approve and halt when the agent has before-hooks, else continue. */
  readonly hookAnswers?: readonly HookAnswer[];
  /** Default: none, allow, ask and deny when the agent has a policy function, else none. */
  readonly policyAnswers?: readonly PolicyAnswer[];
}

/** The calls and the verdicts of `agent` (async: a tool's schema may validate asynchronously). */
export async function agentRules(agent: CheckedAgent, options: RulesOptions = {}): Promise<AgentRules> {
  const config = resolveConfig(agentDispatcherOptions(agent));
  const hookName = config.hooks.before[0]?.name;
  const hookAnswers: readonly HookAnswer[] =
    options.hookAnswers ??
    (hookName === undefined ? [{ kind: 'continue' }] : [{ kind: 'continue' }, { kind: 'approve' }, { kind: 'halt' }]);
  const policyAnswers: readonly PolicyAnswer[] =
    options.policyAnswers ??
    (config.policy === undefined ? [{ kind: 'none' }] : [{ kind: 'none' }, { kind: 'allow' }, { kind: 'ask' }, { kind: 'deny' }]);

  const choices: CallChoice[] = [];
  const skipped: SkippedInput[] = [];
  // The validated input of every input the exploration may meet: the choices and the hooks' rewrites.
  const validated = new Map<string, { ok: true; input: unknown } | { ok: false; text: string }>();
  const validate = async (toolName: string, input: JsonValue): Promise<void> => {
    const key = callKey(toolName, input);
    if (validated.has(key)) return;
    const tool = config.tools.get(toolName)!;
    validated.set(key, await validateInput(tool, toolName, input, tool.coerce ?? config.coerce));
  };
  for (const tool of config.sorted) {
    for (const candidate of candidateInputs(tool.name, tool.inputSchema, config, options.inputs?.[tool.name] ?? [])) {
      await validate(tool.name, candidate.input);
      const check = validated.get(callKey(tool.name, candidate.input))!;
      if (check.ok) choices.push({ tool: tool.name, ...candidate });
      else skipped.push({ tool: tool.name, ...candidate, problem: check.text });
    }
    for (const answer of hookAnswers) if (answer.kind === 'rewrite') await validate(tool.name, answer.input);
  }

  const cache = new Map<string, readonly VerdictUnder[]>();
  return {
    config,
    choices,
    skipped,
    verdicts(toolName, input) {
      const key = callKey(toolName, input);
      let out = cache.get(key);
      if (out === undefined) {
        out = verdictsOf(config, toolName, input, hookName ?? 'hook', hookAnswers, policyAnswers, (name, value) => {
          const v = validated.get(callKey(name, value));
          if (v === undefined) throw new Error(`checkAgent: the input ${JSON.stringify(value)} of ${name} was never validated`);
          return v;
        });
        cache.set(key, out);
      }
      return out;
    },
  };
}

export const callKey = (tool: string, input: unknown): string => `${tool}\n${JSON.stringify(input)}`;

function verdictsOf(
  config: DispatcherConfig,
  toolName: string,
  raw: JsonValue,
  hookName: string,
  hookAnswers: readonly HookAnswer[],
  policyAnswers: readonly PolicyAnswer[],
  validated: (tool: string, input: JsonValue) => { ok: true; input: unknown } | { ok: false; text: string },
): VerdictUnder[] {
  const tool = config.tools.get(toolName)!;
  const out: VerdictUnder[] = [];
  const seen = new Set<string>();
  const add = (entry: VerdictUnder): void => {
    const key = JSON.stringify(entry.verdict);
    if (seen.has(key)) return;
    seen.add(key);
    out.push(entry);
  };
  const first = validated(toolName, raw);
  for (const hook of hookAnswers) {
    for (const policy of policyAnswers) {
      if (!first.ok) {
        add({ verdict: { kind: 'deny', source: 'invalid_input', reason: first.text }, hook, policy });
        continue;
      }
      if (hook.kind === 'halt') {
        add({
          verdict: { kind: 'deny', source: `hook:${hookName}`, reason: `halted by before-hook '${hookName}'` },
          hook,
          policy,
        });
        continue;
      }
      // The input the hooks leave: a rewrite is validated again, and a refused one denies the call.
      const rawAfter = hook.kind === 'rewrite' ? hook.input : raw;
      const after = hook.kind === 'rewrite' ? validated(toolName, hook.input) : first;
      if (!after.ok) {
        add({
          verdict: { kind: 'deny', source: `hook:${hookName}`, reason: `rewrote its input into an invalid one. ${after.text}` },
          hook,
          policy,
        });
        continue;
      }
      const call = { id: 'call', name: toolName, input: rawAfter };
      const subject = { call, tool, input: after.input };
      const policyAnswer: PolicyFact | undefined =
        policy.kind === 'none'
          ? undefined
          : policy.kind === 'allow'
            ? { kind: 'allow' }
            : { kind: policy.kind, reason: `the policy answered ${policy.kind}` };
      // The facts as the dispatcher gathers them, with the policy's answer given (grants are not modelled).
      const hookApproval = hook.kind === 'approve' ? hookName : undefined;
      const facts = factsWithPolicy({ config, grant: () => undefined, subject, hookApproval }, policyAnswer);
      const { decision, source, reason } = decide(facts);
      const verdict: CallVerdict =
        decision === 'allow'
          ? { kind: 'run', input: rawAfter, source }
          : decision === 'deny'
            ? { kind: 'deny', source, reason }
            : { kind: 'park', input: rawAfter, source, reason };
      add({ verdict, hook, policy });
    }
  }
  return out;
}

/**
 * The inputs of a tool its rules distinguish: a base input (the first given, else one built from
 * the tool's JSON Schema; a built one only when no rule has argument conditions for the tool), then per rule that names the tool and has argument conditions the base
 * with each condition's argument set to a value its glob matches, and the base with every argument a
 * rule names set to a value no glob of that argument matches; then the other inputs given.
 */
function candidateInputs(
  toolName: string,
  schema: unknown,
  config: DispatcherConfig,
  given: readonly JsonValue[],
): Array<{ input: JsonValue; why: string }> {
  const out: Array<{ input: JsonValue; why: string }> = [];
  const seen = new Set<string>();
  const add = (input: JsonValue, why: string): void => {
    const key = JSON.stringify(input);
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ input, why });
  };
  const base = given[0] ?? exampleOf(schema);
  const lower = toolName.toLowerCase();
  const patterns = config.permissionSets
    .flatMap((set) => [...set.deny, ...set.allow, ...set.ask])
    .filter((p) => globMatch(p.tool, lower) && p.args.length > 0);
  const globsOf = new Map<string, string[]>();
  for (const p of patterns) for (const c of p.args) globsOf.set(c.arg, [...(globsOf.get(c.arg) ?? []), c.glob]);
  const isObject = base !== null && typeof base === 'object' && !Array.isArray(base);
  // A built base stands for "any input" only when no rule looks at the arguments (else the input
  // that matches no rule does); a given one is always tried.
  if (given[0] !== undefined || !isObject || globsOf.size === 0) add(base, given[0] === undefined ? 'base' : 'given');
  if (isObject) {
    for (const p of patterns) {
      const input: Record<string, JsonValue> = { ...(base as Record<string, JsonValue>) };
      for (const c of p.args) input[c.arg] = matching(c.glob);
      add(input, `matches ${p.source}`);
    }
    if (globsOf.size > 0) {
      const input: Record<string, JsonValue> = { ...(base as Record<string, JsonValue>) };
      for (const [arg, globs] of globsOf) input[arg] = matchingNone(globs);
      add(input, 'matches no rule');
    }
  }
  for (const input of given.slice(1)) add(input, 'given');
  return out;
}

/** A text the glob matches: each `*` matches nothing, each `?` an `x`. */
function matching(glob: string): string {
  return glob.replaceAll('*', '').replaceAll('?', 'x');
}

/** A text none of `globs` matches. */
function matchingNone(globs: readonly string[]): string {
  for (const candidate of ['other', 'zz-other-value', 'q', '0', '']) {
    if (!globs.some((g) => globMatch(g, candidate))) return candidate;
  }
  return 'zz-unmatched';
}

/** An input a JSON Schema of a tool accepts in the common cases: each required property with a plain value of its type. */
export function exampleOf(schema: unknown, depth = 0): JsonValue {
  if (schema === null || typeof schema !== 'object' || depth > 8) return null;
  const s = schema as Record<string, unknown>;
  if (s.const !== undefined) return s.const as JsonValue;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0] as JsonValue;
  if (s.default !== undefined) return s.default as JsonValue;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as string[]) : [];
      return Object.fromEntries(required.map((key) => [key, exampleOf(props[key], depth + 1)]));
    }
    case 'string':
      return typeof s.minLength === 'number' && s.minLength > 1 ? 'x'.repeat(s.minLength) : 'x';
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'null':
      return null;
    default: {
      const options = (s.anyOf ?? s.oneOf) as unknown[] | undefined;
      return Array.isArray(options) && options.length > 0 ? exampleOf(options[0], depth + 1) : {};
    }
  }
}
