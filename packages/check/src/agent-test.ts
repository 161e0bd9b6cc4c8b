// A violation of `checkAgent` as a vitest file a user commits: the path's model replies as a
// scripted model (@turnkit/testing), the path's decisions as the approve callback, the agent's
// tools with their `execute` replaced by the path's outcomes (nothing real runs), and the agent's
// real rules, hooks and policy in a real dispatcher under the inline interpreter. The test asserts
// the properties on the run's call records, so it fails while the agent lets the path happen and
// passes once the agent is fixed.

import type { AgentViolation } from './agent-violation.js';

/** How `counterexampleTest` writes a violation as a vitest file: where the agent and the properties come from. */
export interface CounterexampleTestOptions {
  /** The agent's module as the test file imports it (relative to the test file), e.g. `./agents.ts`. */
  readonly agentImport: string;
  /** The agent's name in the module's `agents` (see `agentFromModule`); not needed for a single agent. */
  readonly agentName?: string;
  /** The module's export holding the user's properties (an array); default `properties`. */
  readonly propertiesExport?: string;
  /** How the command that wrote the file was run, for its header comment. */
  readonly writtenBy?: string;
}

const js = (value: unknown): string => JSON.stringify(value);

/** Source text on one line: a comment line never ends early. */
const oneLine = (text: string): string => text.replace(/[\r\n\u2028\u2029]+/g, ' ');

/**
 * The text of a vitest file that replays `violation` against the real agent.
 *
 * @example writeFileSync('agent.counterexample.test.ts', counterexampleTest(result.violations[0], { agentImport: './agents.ts' }));
 */
export function counterexampleTest(violation: AgentViolation, options: CounterexampleTestOptions): string {
  const replies: string[] = [];
  const outcomes: Record<string, 'ok' | 'failed'> = {};
  const decisions: Record<string, 'approve' | 'reject'> = {};
  const assumed: string[] = [];
  for (const step of violation.path) {
    const event = step.event;
    if (event.type === 'model_responded') {
      const { text, toolCalls, usage } = event.response;
      const extras = usage === undefined ? '' : `, { usage: ${js(usage)} }`;
      replies.push(
        toolCalls.length === 0
          ? `text(${js(text)}${extras})`
          : `toolCalls(${toolCalls.map((c) => `call(${js(c.name)}, ${js(c.input)}, { id: ${js(c.id)} })`).join(', ')}${extras})`,
      );
    }
    if (event.type === 'approvals_decided') {
      for (const [id, decision] of Object.entries(event.decisions))
        decisions[id] = decision.type === 'approve' ? 'approve' : 'reject';
    }
    Object.assign(outcomes, step.outcomes ?? {});
    for (const [id, { hook, policy }] of Object.entries(step.assumed ?? {})) {
      assumed.push(`${id}: before-hooks ${js(hook)}, policy ${js(policy)}`);
    }
  }
  replies.push(`text('Done.')`);
  const name = options.agentName === undefined ? '' : `, ${js(options.agentName)}`;
  const propertiesExport = options.propertiesExport ?? 'properties';
  const lines = [
    `// Written by ${oneLine(options.writtenBy ?? '@turnkit/check checkAgent')}: the shortest turn found in which`,
    `// "${oneLine(violation.property)}" breaks:`,
    `//   ${oneLine(violation.message)}`,
    '// The path:',
    ...violation.path.map((step, i) => `//   ${i + 1}. ${oneLine(step.label)}`),
    '// It runs the agent with a scripted model (the replies below), the decisions below and its tools',
    "// stubbed (each call ends as it did on the path), through the agent's real rules, and checks the",
    '// properties on the calls it made. It fails until the agent is fixed; commit it beside the agent.',
    ...(assumed.length === 0
      ? []
      : [
          '// The path assumed these answers of code the check cannot run (the test runs the real code,',
          '// which may answer otherwise):',
          ...assumed.map((a) => `//   ${oneLine(a)}`),
        ]),
    "import { agentDispatcherOptions, agentFromModule, checkAgentTrace, type AgentProperty } from '@turnkit/check';",
    "import type { CallRecord } from '@turnkit/core';",
    "import { createDispatcher } from '@turnkit/dispatch';",
    "import { runTurn } from '@turnkit/inline';",
    "import { call, scriptedModel, text, toolCalls } from '@turnkit/testing';",
    "import { expect, it } from 'vitest';",
    `import * as agentModule from ${js(options.agentImport)};`,
    '',
    '/** What the model answers, one reply per model call. */',
    'const replies = [',
    ...replies.map((r) => `  ${r},`),
    '];',
    '/** How each call that ran ended on the path. */',
    `const outcomes: Record<string, 'ok' | 'failed'> = ${js(outcomes)};`,
    '/** What the person decided; a parked call not listed is left undecided (its approval expires). */',
    `const decisions: Record<string, 'approve' | 'reject'> = ${js(decisions)};`,
    '',
    `it(${js(`${violation.property} (counterexample of turnkit check)`)}, async () => {`,
    `  const agent = agentFromModule(agentModule${name});`,
    `  const properties = ((agentModule as Record<string, unknown>)[${js(propertiesExport)}] ?? []) as readonly AgentProperty[];`,
    '  const tools = (agent.tools ?? []).map((tool) => ({',
    '    ...tool,',
    '    execute: (_input: unknown, context: { readonly callId: string }) => {',
    "      if (outcomes[context.callId] === 'failed') throw new Error('The tool failed.');",
    '      return `ok: ${tool.name}`;',
    '    },',
    '  }));',
    '  const records: CallRecord[] = [];',
    '  await runTurn({',
    '    model: scriptedModel(replies),',
    "    input: 'Model-checked turn.',",
    '    tools: createDispatcher(agentDispatcherOptions(agent, tools)),',
    '    ...(agent.limits === undefined ? {} : { limits: agent.limits }),',
    '    approve: (pending) =>',
    '      Object.fromEntries(',
    '        pending',
    '          .filter((parked) => decisions[parked.call.id] !== undefined)',
    '          .map((parked) => [',
    '            parked.call.id,',
    "            decisions[parked.call.id] === 'approve' ? { type: 'approve' as const } : { type: 'reject' as const, reason: 'not this one' },",
    '          ]),',
    '      ),',
    '    onStep: (step) => {',
    '      const event = step.event as { readonly records?: readonly CallRecord[] } | null;',
    '      records.push(...(event?.records ?? []));',
    '    },',
    '  });',
    '  expect(checkAgentTrace(agent, records, properties)).toEqual([]);',
    '});',
    '',
  ];
  return lines.join('\n');
}
