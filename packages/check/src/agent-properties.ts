// What `checkAgent` checks of an agent, as predicates over a trace: the calls' audit records
// (core's `CallRecord`, what a dispatcher's `onRecord` gives and the tool events carry), in the
// order the dispatcher made them. A record with `attempts > 0` is a call that ran. The same
// predicates run on every edge of an exploration and on a real run (`checkAgentTrace`), so a
// counterexample test checks exactly what the exploration checked.

import type { CallRecord, JsonValue, TurnLimitsInput } from '@turnkit/core';
import { createTurn } from '@turnkit/core';
import { denialNow, resolveConfig, type DispatcherConfig } from '@turnkit/dispatch/internal';
import { agentDispatcherOptions, type CheckedAgent } from './agent-types.js';

/** The audit records of a turn's calls, in the order they were made. */
export type AgentTrace = readonly CallRecord[];

/** A property of every run of an agent: `check` returns why a trace breaks it, or undefined when it holds. */
export interface AgentProperty {
  /** The property's name, in violations and test names. */
  readonly name: string;
  /** Returns why the trace breaks the property, or undefined when it holds. */
  readonly check: (trace: AgentTrace) => string | undefined;
}

/** True when the record is of a call that ran (its tool was executed at least once). */
export const ran = (record: CallRecord): boolean => record.attempts > 0;

const shown = (input: JsonValue): string => {
  const text = JSON.stringify(input);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
};

/**
 * A property from a predicate over the trace: `holds(trace)` is false when it is broken.
 *
 * @example property('search runs at most twice', (trace) => trace.filter((r) => r.tool === 'search').length <= 2)
 */
export function property(name: string, holds: (trace: AgentTrace) => boolean): AgentProperty {
  return { name, check: (trace) => (holds(trace) ? undefined : `${name}: broken`) };
}

/**
 * `tool` never runs unless a person approved that call (`user_approved`); with `when`, only its
 * calls whose input `when` accepts.
 *
 * @example neverWithoutApproval('delete_file')
 */
export function neverWithoutApproval(tool: string, when?: (input: JsonValue) => boolean): AgentProperty {
  const name = `${tool} never runs without a person's approval${when === undefined ? '' : ' (for the inputs given)'}`;
  return {
    name,
    check: (trace) => {
      const bad = trace.find(
        (r) => r.tool === tool && ran(r) && r.decision !== 'user_approved' && (when === undefined || when(r.input)),
      );
      return bad === undefined
        ? undefined
        : `${bad.callId} ran ${tool} ${shown(bad.input)} without approval (${bad.decision} by ${bad.source})`;
    },
  };
}

/**
 * `tool` runs at most `n` times in a turn.
 *
 * @example atMostCalls('pay', 1)
 */
export function atMostCalls(tool: string, n: number): AgentProperty {
  if (!Number.isInteger(n) || n < 0)
    throw new TypeError(`atMostCalls('${tool}', n): n must be a whole number ≥ 0, got ${String(n)}.`);
  return {
    name: `${tool} runs at most ${n} time${n === 1 ? '' : 's'}`,
    check: (trace) => {
      const runs = trace.filter((r) => r.tool === tool && ran(r));
      return runs.length <= n
        ? undefined
        : `${tool} ran ${runs.length} times (${runs.map((r) => r.callId).join(', ')}), more than ${n}`;
    },
  };
}

/**
 * `tool` never runs once `other` has run in the turn.
 *
 * @example neverAfter('send_email', 'read_secrets')
 */
export function neverAfter(tool: string, other: string): AgentProperty {
  return {
    name: `${tool} never runs after ${other}`,
    check: (trace) => {
      const first = trace.findIndex((r) => r.tool === other && ran(r));
      if (first === -1) return undefined;
      const bad = trace.slice(first + 1).find((r) => r.tool === tool && ran(r));
      return bad === undefined ? undefined : `${bad.callId} ran ${tool} after ${trace[first]!.callId} ran ${other}`;
    },
  };
}

/**
 * The properties every agent has, from its own rules: a call its deny rules deny never runs (they
 * are read again on the input that ran); the turn's `maxToolCalls` and the dispatcher's
 * `budget` (total and per tool) hold; no call gets two records.
 */
export function builtInProperties(agent: CheckedAgent): AgentProperty[] {
  const config = resolveConfig(agentDispatcherOptions(agent));
  const limits = createTurn({ id: 'check', limits: agent.limits ?? ({} as TurnLimitsInput) }).limits;
  const out: AgentProperty[] = [
    {
      name: 'a denied input never runs',
      check: (trace) => {
        for (const record of trace) {
          if (!ran(record)) continue;
          const denial = deniedNow(config, record);
          if (denial !== undefined) return `${record.callId} ran ${record.tool} ${shown(record.input)}, which is ${denial}`;
        }
        return undefined;
      },
    },
    {
      name: 'one result per call',
      check: (trace) => {
        const seen = new Set<string>();
        for (const record of trace) {
          if (seen.has(record.callId)) return `${record.callId} has two records`;
          seen.add(record.callId);
        }
        return undefined;
      },
    },
  ];
  const caps: Array<[string, number | undefined, (r: CallRecord) => boolean]> = [
    ['limits.budget.maxToolCalls', limits.budget.maxToolCalls, () => true],
    ['budget.maxCalls', config.budget.maxCalls, () => true],
    ...[...config.budget.perTool].map(([tool, n]): [string, number, (r: CallRecord) => boolean] => [
      `budget.perTool.${tool}`,
      n,
      (r) => r.tool === tool,
    ]),
  ];
  for (const [what, cap, counts] of caps) {
    if (cap === undefined) continue;
    out.push({
      name: `${what} = ${cap} holds`,
      check: (trace) => {
        const runs = trace.filter((r) => ran(r) && counts(r)).length;
        return runs <= cap ? undefined : `${runs} calls ran, more than ${what} = ${cap}`;
      },
    });
  }
  return out;
}

/** What the agent's deny rules say now of the input a record ran with, or undefined when they allow it. */
function deniedNow(config: DispatcherConfig, record: CallRecord): string | undefined {
  const tool = config.tools.get(record.tool);
  if (tool === undefined) return `a call of a tool the agent does not have`;
  const call = { id: record.callId, name: record.tool, input: record.input };
  return denialNow(config, { call, tool, input: record.input })?.reason;
}

/** One broken property of a trace. */
export interface TraceViolation {
  /** The broken property's name. */
  readonly property: string;
  /** Why the trace breaks it. */
  readonly message: string;
}

/**
 * The built-in properties and `properties` on a trace (from a real run: the records of the tool
 * events, see the counterexample tests `checkAgent` writes). Empty when every one holds.
 *
 * @example expect(checkAgentTrace(agent, records, [neverWithoutApproval('delete_file')])).toEqual([]);
 */
export function checkAgentTrace(
  agent: CheckedAgent,
  trace: AgentTrace,
  properties: readonly AgentProperty[] = [],
): TraceViolation[] {
  return evaluate([...builtInProperties(agent), ...properties], trace);
}

/** Each property on the trace; a property that throws is reported as broken, with what it threw. */
export function evaluate(properties: readonly AgentProperty[], trace: AgentTrace): TraceViolation[] {
  const out: TraceViolation[] = [];
  for (const p of properties) {
    let message: string | undefined;
    try {
      message = p.check(trace);
    } catch (error) {
      message = `the property threw: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (message !== undefined) out.push({ property: p.name, message });
  }
  return out;
}
